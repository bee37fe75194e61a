import type { Clock, CommitMode, ServerDescription } from "@ruststream/core";
import type { KafkaConnectionOptions, ResolvedConnection } from "./client/connectionOptions.js";
import type { ConfigValue, Partitioner } from "./client/link.js";

// The broker's options, read by the broker (checked when it is built, used to connect) and, as the
// settings it resolved, by its connection: in a file of their own, so broker.ts imports
// connection.ts and nothing imports either back. Beside them, what is read from them alone: the
// server's description.

export interface KafkaBrokerOptions extends KafkaConnectionOptions {
  /**
   * The consumer group of bare names and of descriptors that name none, the same in every replica
   * so they share the partitions. Default: the name of the app that connects the broker.
   */
  readonly group?: string;
  /** The commit mode of bare names and of descriptors that name none (default `auto`). */
  readonly commit?: CommitMode;
  /** How keys map to partitions (default `murmur2`, the Java client's), for every policy naming none. */
  readonly partitioner?: Partitioner;
  /**
   * The largest record (key, value and headers) a publish may carry, refused before it is sent
   * (default 1 000 000 bytes, librdkafka's `message.max.bytes`).
   */
  readonly maxMessageBytes?: number;
  /** How long `connect()` waits for the cluster to answer (default 30 s). */
  readonly connectTimeoutMs?: number;
  /** How long `shutdown()` waits for unconfirmed publishes (default 30 s). */
  readonly flushTimeoutMs?: number;
  /** Raw client properties for every client the broker opens: the engine's own names and values. */
  readonly config?: Readonly<Record<string, ConfigValue>>;
  /**
   * The transactional id of publishers' transactions (a publish policy's own wins). Needed for
   * `transaction()`; keep it stable for one instance of the service and unique among running
   * instances, since a producer opening with an id fences off any older one using it.
   */
  readonly transactionalId?: string;
  /**
   * The topic every request of this broker's connections asks its reply on, for clusters where a
   * service may not create topics: an existing topic, shared by every requester naming it, each
   * reading all of it from its end and keeping only the replies to its own requests. Unset, each
   * connection creates a reply topic of its own at its first request and deletes it at shutdown.
   */
  readonly replyTopic?: string;
  /** Where request timeouts take time from (the in-process mode uses the test's clock). */
  readonly clock?: Clock;
}

/** The options as the broker checked them: what its connections are made from. */
export interface BrokerSettings {
  readonly connection: ResolvedConnection;
  readonly group: string | undefined;
  readonly commit: CommitMode | undefined;
  readonly partitioner: Partitioner;
  readonly maxMessageBytes: number;
  readonly connectTimeoutMs: number;
  readonly flushTimeoutMs: number;
  readonly transactionalId: string | undefined;
  readonly replyTopic: string | undefined;
}

/** The cluster as configured: the bootstrap servers and the security in use, never a credential. */
export function describeKafkaServer(connection: ResolvedConnection): ServerDescription {
  const [first, ...rest] = connection.brokers;
  const security =
    connection.sasl === undefined
      ? connection.tls === undefined
        ? "plaintext"
        : "TLS"
      : `SASL ${connection.sasl.mechanism.toUpperCase()}${connection.tls === undefined ? "" : " over TLS"}`;
  return {
    protocol: connection.tls === undefined ? "kafka" : "kafka-secure",
    ...(first === undefined ? {} : { host: first }),
    description: `Kafka cluster (${security})${rest.length === 0 ? "" : `, bootstrap servers ${connection.brokers.join(", ")}`}`,
  };
}

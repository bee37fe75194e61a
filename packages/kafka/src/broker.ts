import {
  type Broker,
  type Clock,
  type ClosedBroker,
  type CommitMode,
  type ConnectedBroker,
  type ConnectOptions,
  type DescribesServer,
  isRustStreamError,
  type OutgoingMessage,
  RustStreamError,
  type ServerDescription,
  systemClock,
} from "@ruststream/core";
import {
  type Backlog,
  brokerMark,
  describeMark,
  type Injection,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  type PendingReply,
  positive,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import {
  checkedConfig,
  configEntries,
  type KafkaConnectionOptions,
  type ResolvedConnection,
  resolveConnection,
} from "./client/connectionOptions.js";
import { checkAssignment, checkCommitMode, checkCompression } from "./client/engines.js";
import type {
  ConfigValue,
  Link,
  LinkProducer,
  Partitioner,
  ProducerSettings,
} from "./client/link.js";
import type { KafkaHost } from "./host.js";
import type { InProcessCluster } from "./inProcess/cluster.js";
import type { InProcessLink } from "./inProcess/inProcessLink.js";
import {
  checkTransactionalId,
  KafkaPublish,
  KafkaPublisher,
  type KafkaPublishOptions,
  type PublisherHost,
} from "./publisher.js";
import { ReplyInbox } from "./replyInbox.js";
import { checkCommit, KafkaTopic, topicName } from "./sources.js";
import type { KafkaDelivery } from "./topic/topicDelivery.js";
import { KafkaTopicSubscription } from "./topic/topicSubscription.js";
import { TransactionLine } from "./transactions.js";

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

interface BrokerSettings {
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

/**
 * A Kafka broker before it connects: the constructor only checks and records its configuration.
 * `connect()` loads the engine's client and reaches the cluster; `connectInProcess()` runs the same
 * descriptors against an in-process stand-in of a cluster, for tests.
 */
export class KafkaBroker
  implements Broker<ConnectedKafkaBroker>, InProcessBroker<ConnectedKafkaBroker>, DescribesServer
{
  readonly [brokerMark] = "kafka";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: KafkaBrokerOptions;
  readonly #settings: BrokerSettings;
  #inProcessCluster: InProcessCluster | undefined;

  constructor(options: KafkaBrokerOptions) {
    if (typeof options !== "object" || options === null) {
      throw new RustStreamError(
        "invalid-argument",
        'KafkaBroker needs options: at least { brokers: "host:port" }',
      );
    }
    const partitioner = options.partitioner ?? "murmur2";
    if (partitioner !== "murmur2" && partitioner !== "consistent-random") {
      throw new RustStreamError(
        "invalid-argument",
        `partitioner: "${String(partitioner)}"; give "murmur2" or "consistent-random"`,
      );
    }
    if (
      options.group !== undefined &&
      (typeof options.group !== "string" || options.group.length === 0)
    ) {
      throw new RustStreamError("invalid-argument", "group cannot be empty: give the app's name");
    }
    const config = configEntries("KafkaBroker", options.config);
    const maxFromConfig = config.find(([key]) => key === "message.max.bytes")?.[1];
    this.#options = options;
    this.#settings = {
      connection: resolveConnection(options, config),
      group: options.group,
      commit: checkCommit(options.commit),
      partitioner,
      maxMessageBytes: positive(
        "maxMessageBytes",
        options.maxMessageBytes ?? (typeof maxFromConfig === "number" ? maxFromConfig : undefined),
        1_000_000,
      ),
      connectTimeoutMs: positive("connectTimeoutMs", options.connectTimeoutMs, 30_000),
      flushTimeoutMs: positive("flushTimeoutMs", options.flushTimeoutMs, 30_000),
      transactionalId: checkTransactionalId("KafkaBroker", options.transactionalId),
      replyTopic:
        options.replyTopic === undefined
          ? undefined
          : topicName("KafkaBroker replyTopic", options.replyTopic),
    };
  }

  /** The same broker with one more raw client property (applied last, so it wins). */
  config(key: string, value: ConfigValue): KafkaBroker {
    const entry = checkedConfig("KafkaBroker", key, value);
    return new KafkaBroker({
      ...this.#options,
      config: Object.fromEntries([...this.#settings.connection.config, entry]),
    });
  }

  /** The engine every connection of this broker uses. */
  get engine(): "librdkafka" | "kafkajs" {
    return this.#settings.connection.engine;
  }

  /** The cluster as configured, before connecting: the bootstrap servers, never a credential. */
  describeServer(): ServerDescription {
    return describeKafkaServer(this.#settings.connection);
  }

  async connect(options?: ConnectOptions): Promise<ConnectedKafkaBroker> {
    const { connection, connectTimeoutMs } = this.#settings;
    let link: Link;
    try {
      link =
        connection.engine === "librdkafka"
          ? await (await import("./client/librdkafka/rdkafkaLink.js")).RdkafkaLink.connect(
              connection,
              connectTimeoutMs,
            )
          : await (await import("./client/kafkajs/kafkajsLink.js")).KafkajsLink.connect(
              connection,
              connectTimeoutMs,
            );
    } catch (error) {
      if (isRustStreamError(error)) throw error;
      throw new RustStreamError(
        "broker-failure",
        `connecting to the Kafka cluster at ${connection.brokers.join(", ")} (engine ${connection.engine}) failed: ${(error as Error).message}${connection.sasl === undefined ? "" : " (check the sasl mechanism, username and password)"}`,
        { cause: error },
      );
    }
    return new ConnectedKafkaBroker(link, this.#settings, {
      group: this.#settings.group ?? options?.app?.name,
      inProcess: undefined,
      clock: this.#options.clock ?? systemClock,
    });
  }

  /**
   * The in-process mode: the same descriptors, policies and settlement code against a stand-in of a
   * cluster that lives in this broker object (so a second connection sees what the first left).
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedKafkaBroker> {
    const [{ InProcessCluster }, { InProcessLink }] = await Promise.all([
      import("./inProcess/cluster.js"),
      import("./inProcess/inProcessLink.js"),
    ]);
    this.#inProcessCluster ??= new InProcessCluster();
    const link = new InProcessLink(this.#inProcessCluster, options.coordinator);
    return new ConnectedKafkaBroker(link, this.#settings, {
      group: this.#settings.group ?? options.app?.name,
      inProcess: link,
      clock: options.clock,
    });
  }
}

function describeKafkaServer(connection: ResolvedConnection): ServerDescription {
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

/**
 * What shutting down a Kafka connection left behind: `unflushed` counts records sent and not
 * confirmed by a delivery report within the flush timeout; the closed subscriptions' consumers left
 * their groups, and `returnedDeliveries` were handed out and never settled: not committed, so the
 * group reads them again.
 */
export type ClosedKafkaBroker = ClosedBroker;

interface ConnectionFacts {
  /** The group option, else the connecting app's name. */
  readonly group: string | undefined;
  /** The stand-in's link, on an in-process connection. */
  readonly inProcess: InProcessLink | undefined;
  /** Where request timeouts take time from. */
  readonly clock: Clock;
}

/** A connection to a Kafka cluster. */
export class ConnectedKafkaBroker
  extends TestableConnection<KafkaTopic, ClosedKafkaBroker, KafkaPublishOptions>
  implements
    ConnectedBroker<KafkaTopic, KafkaDelivery, KafkaPublisher, ClosedKafkaBroker>,
    DescribesServer,
    KafkaHost,
    PublisherHost
{
  readonly [brokerMark] = "kafka";
  readonly [describeMark] = true as const;
  readonly link: Link;
  readonly partitioner: Partitioner;
  readonly maxMessageBytes: number;
  readonly inflight = { count: 0 };
  /** What a new subscription to a bare name sees of earlier publishes: a new group starts at the end. */
  readonly backlog: Backlog = "missed";
  readonly #settings: BrokerSettings;
  readonly #facts: ConnectionFacts;
  readonly #producers = new Map<string, Promise<LinkProducer>>();
  readonly #transactionLines = new Map<string, TransactionLine>();
  readonly #partitionCounts = new Map<string, number>();
  readonly #inbox: ReplyInbox;

  constructor(link: Link, settings: BrokerSettings, facts: ConnectionFacts) {
    super(
      {
        label: "Kafka",
        accepts: "a name or a KafkaTopic",
        group: {
          noun: "consumer group",
          option: "group",
          broker: "KafkaBroker",
          descriptor: "KafkaTopic",
        },
      },
      facts.inProcess !== undefined,
    );
    this.link = link;
    this.#settings = settings;
    this.#facts = facts;
    this.partitioner = settings.partitioner;
    this.maxMessageBytes = settings.maxMessageBytes;
    this.#inbox = new ReplyInbox(this, facts.clock, settings.replyTopic);
  }

  /** A bare name is a topic read by the broker's group; without one this says how to give it. */
  source(name: string): KafkaTopic {
    return new KafkaTopic(name, { group: this.groupOf(name, this.#facts.group) });
  }

  async subscribe(source: string | KafkaTopic): Promise<KafkaTopicSubscription> {
    this.assertOpen();
    const descriptor = this.descriptorOf(source);
    const group = this.groupOf(descriptor.name, descriptor.group ?? this.#facts.group);
    const commit = descriptor.commit ?? this.#settings.commit ?? "auto";
    const transactionalId = this.#settings.transactionalId;
    if (commit === "transactional" && transactionalId === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `KafkaTopic "${descriptor.name}" commits "transactional", which commits its offsets inside transactions: give KafkaBroker a transactionalId option (stable for this instance of the service, unique among running instances), or use commit "tracked"`,
      );
    }
    checkAssignment(this.#settings.connection.engine, descriptor.assignment);
    checkCommitMode(this.#settings.connection.engine, commit);
    let subscription: KafkaTopicSubscription;
    try {
      subscription = await KafkaTopicSubscription.open(this, descriptor, {
        group,
        commit,
        ...(commit === "transactional" && transactionalId !== undefined
          ? {
              // The broker's default producer settings: a publisher of the default policy shares
              // this line, so its own transactions and the windows commit one after another.
              line: this.transactions(
                { partitioner: this.partitioner, compression: undefined, config: [] },
                transactionalId,
              ),
            }
          : {}),
      });
    } catch (error) {
      if (this.isClosed) throw this.closedError("subscription");
      if (isRustStreamError(error)) throw error;
      throw new RustStreamError(
        "broker-failure",
        `subscribing to "${descriptor.name}" as group "${group}" failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return this.adopt(subscription);
  }

  defaultPublishPolicy(): KafkaPublish {
    return new KafkaPublish();
  }

  /** Used by {@link KafkaPublish.pair}. */
  pairPublisher(policy: KafkaPublish): Promise<KafkaPublisher> {
    this.assertOpen();
    checkCompression(this.#settings.connection.engine, policy.compression);
    return KafkaPublisher.pair(this, policy);
  }

  // PublisherHost

  producer(settings: ProducerSettings): Promise<LinkProducer> {
    this.assertOpen();
    const key = JSON.stringify(settings);
    let producer = this.#producers.get(key);
    if (producer === undefined) {
      producer = this.link.producer(settings);
      // A producer that failed to open is not kept: the next pairing tries again.
      producer.catch(() => this.#producers.delete(key));
      this.#producers.set(key, producer);
    }
    return producer;
  }

  get transactionalId(): string | undefined {
    return this.#settings.transactionalId;
  }

  transactions(settings: ProducerSettings, transactionalId: string): TransactionLine {
    this.assertOpen();
    const key = JSON.stringify(settings);
    let line = this.#transactionLines.get(transactionalId);
    if (line === undefined) {
      const producer = this.link.transactionalProducer(settings, transactionalId);
      // A producer that failed to open is not kept: the next transaction tries again.
      producer.catch(() => {
        if (this.#transactionLines.get(transactionalId) === line) {
          this.#transactionLines.delete(transactionalId);
        }
      });
      line = new TransactionLine(key, producer);
      this.#transactionLines.set(transactionalId, line);
    } else if (line.settings !== key) {
      throw new RustStreamError(
        "invalid-argument",
        `transactional id "${transactionalId}" is in use by a publish policy with other producer settings on this connection, and one id is one producer: give this policy a transactionalId of its own, or the same partitioner, compression and config`,
      );
    }
    return line;
  }

  async partitionsOf(topic: string, fresh: boolean): Promise<number | undefined> {
    if (!fresh) {
      const cached = this.#partitionCounts.get(topic);
      if (cached !== undefined) return cached;
    }
    const count = await this.link.admin.partitions(topic);
    if (count === undefined) this.#partitionCounts.delete(topic);
    else this.#partitionCounts.set(topic, count);
    return count;
  }

  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.assertOpen();
    return this.#inbox.awaitReply(correlationId, timeoutMs);
  }

  // TestableConnection, on an in-process connection

  protected prepareInjection(message: OutgoingMessage<KafkaPublishOptions>): Injection {
    const engine = this.#facts.inProcess;
    if (engine === undefined) throw this.notInProcess("inject() works");
    const producer = engine.producerNow(this.partitioner);
    const { record, raw } = new KafkaPublisher(
      this,
      producer,
      {
        partitioner: this.partitioner,
        compression: undefined,
        config: [],
      },
      undefined,
    ).prepare(message);
    return { raw, deliver: () => producer.appendNow(record) };
  }

  /** The configured cluster, in-process too: docs generated under a test describe production. */
  describeServer(): ServerDescription {
    return describeKafkaServer(this.#settings.connection);
  }

  protected async teardown(): Promise<TeardownFacts<ClosedKafkaBroker>> {
    // Waiting requests fail now; the inbox's reader and topic go while the producers close.
    const inboxStopped = this.#inbox.stop(this.closedError("request"));
    let unflushed = 0;
    const producers = await Promise.all(
      [...this.#producers.values()].map((p) => p.catch(() => undefined)),
    );
    for (const producer of producers) {
      if (producer === undefined) continue;
      unflushed += await producer.flush(this.#settings.flushTimeoutMs);
      await producer.close();
    }
    // A transaction committing now finishes (bounded by the engine's own timeouts); none starts.
    await Promise.all([...this.#transactionLines.values()].map((line) => line.close()));
    this.#transactionLines.clear();
    // Before the engine closes: deleting the inbox's topic takes its admin connection.
    await inboxStopped;
    await this.link.close();
    return { unflushed };
  }
}

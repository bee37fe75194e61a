import {
  type Broker,
  type ConnectOptions,
  type DescribesServer,
  isRustStreamError,
  RustStreamError,
  type ServerDescription,
  systemClock,
} from "@ruststream/core";
import {
  brokerMark,
  describeMark,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  positive,
} from "@ruststream/core/broker";
import { checkedConfig, configEntries, resolveConnection } from "./client/connectionOptions.js";
import type { ConfigValue, Link } from "./client/link.js";
import { ConnectedKafkaBroker } from "./connection.js";
import type { InProcessCluster } from "./inProcess/cluster.js";
import { type BrokerSettings, describeKafkaServer, type KafkaBrokerOptions } from "./options.js";
import { checkTransactionalId } from "./publishPolicy.js";
import { checkCommit, topicName } from "./sources.js";

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
      onState: options?.onState,
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
      onState: options.onState,
    });
  }
}

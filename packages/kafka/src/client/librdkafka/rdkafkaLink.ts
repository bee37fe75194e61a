import type { ResolvedConnection } from "../connectionOptions.js";
import type {
  ConsumedRecord,
  ConsumerHooks,
  ConsumerSettings,
  Link,
  LinkAdmin,
  LinkConsumer,
  LinkProducer,
  LinkReader,
  LinkTransactionalProducer,
  PartitionOffset,
  ProducerSettings,
} from "../link.js";
import { loadClient } from "../load.js";
import { RdkafkaAdmin } from "./admin.js";
import {
  connectionConfig,
  consumerConfig,
  producerConfig,
  readerConfig,
  transactionalProducerConfig,
} from "./config.js";
import { RdkafkaConsumer } from "./consumer.js";
import { RdkafkaProducer } from "./producer.js";
import { call, callVoid, type RdError, type RdModule, type RdProducer } from "./rdkafka.js";
import { RdkafkaReader } from "./reader.js";
import { RdkafkaTransactionalProducer } from "./transactions.js";

// librdkafka's local error codes for a login the cluster refused and a failed TLS handshake.
const AUTHENTICATION = -169;
const SSL = -181;
const refusal = /authentication failure|ssl handshake failed|certificate verify failed/i;

/** The librdkafka engine: @confluentinc/kafka-javascript's node-rdkafka style clients. */
export class RdkafkaLink implements Link {
  readonly kind = "librdkafka" as const;
  readonly admin: LinkAdmin;
  readonly #module: RdModule;
  readonly #connection: ResolvedConnection;
  readonly #control: RdProducer;
  readonly #connectTimeoutMs: number;

  private constructor(
    module: RdModule,
    connection: ResolvedConnection,
    control: RdProducer,
    connectTimeoutMs: number,
  ) {
    this.#module = module;
    this.#connection = connection;
    this.#control = control;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.admin = new RdkafkaAdmin(
      control,
      module.AdminClient.createFrom(control),
      module.OffsetSpec,
    );
  }

  /** Loads the client and opens one control connection, which proves the cluster answers. */
  static async connect(
    connection: ResolvedConnection,
    connectTimeoutMs: number,
  ): Promise<RdkafkaLink> {
    const module = await loadClient<RdModule>(
      "librdkafka",
      () => import("@confluentinc/kafka-javascript"),
    );
    const control = new module.Producer(connectionConfig(connection));
    // librdkafka reports a refused login or handshake as an event and keeps retrying, so connect()
    // alone would only time out: an authentication or TLS failure ends the attempt at once, and
    // names itself.
    let refused: (error: RdError) => void = () => {};
    const failure = new Promise<never>((_, reject) => {
      refused = reject;
    });
    control.on("event.error", (error) => {
      // The binding reports some of these with code -1 and only the message to tell them apart.
      if (error.code === AUTHENTICATION || error.code === SSL || refusal.test(error.message)) {
        refused(error);
      }
    });
    // Events are served by polling, which nothing does until connect() returns: poll meanwhile.
    // poll() throws while the client counts itself unconnected (before librdkafka's handle is up,
    // and once a failed attempt has dropped it): there is nothing to serve then, and a throw from
    // a timer would be an uncaught exception.
    const polling = setInterval(() => {
      try {
        control.poll();
      } catch {}
    }, 100);
    const connecting = call((cb) => control.connect({ timeout: connectTimeoutMs }, cb));
    try {
      await Promise.race([connecting, failure]);
    } catch (error) {
      // Closed once the attempt ends on its own, without holding up the refusal.
      void connecting
        .catch(() => undefined)
        .then(() => callVoid((cb) => control.disconnect(cb)))
        .catch(() => undefined);
      throw error;
    } finally {
      clearInterval(polling);
    }
    return new RdkafkaLink(module, connection, control, connectTimeoutMs);
  }

  async producer(settings: ProducerSettings): Promise<LinkProducer> {
    const producer = new this.#module.Producer(producerConfig(this.#connection, settings));
    producer.on("event.error", () => {});
    await call((cb) => producer.connect({ timeout: this.#connectTimeoutMs }, cb));
    return new RdkafkaProducer(producer);
  }

  async transactionalProducer(
    settings: ProducerSettings,
    transactionalId: string,
  ): Promise<LinkTransactionalProducer> {
    const config = transactionalProducerConfig(this.#connection, settings, transactionalId);
    // Called again for each producer that replaces one after an aborted transaction.
    const connect = async (): Promise<RdProducer> => {
      const producer = new this.#module.Producer(config);
      producer.on("event.error", () => {});
      await call((cb) => producer.connect({ timeout: this.#connectTimeoutMs }, cb));
      return producer;
    };
    return RdkafkaTransactionalProducer.open(connect, this.#connectTimeoutMs);
  }

  consumer(settings: ConsumerSettings, hooks: ConsumerHooks): LinkConsumer {
    const config = consumerConfig(this.#connection, settings);
    return new RdkafkaConsumer(
      (rebalance) => {
        const consumer = new this.#module.KafkaConsumer({ ...config, rebalance_cb: rebalance }, {});
        consumer.on("event.error", () => {});
        return consumer;
      },
      settings.group,
      settings.topics,
      hooks,
      settings.commit !== "auto",
    );
  }

  async reader(
    name: string,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ): Promise<LinkReader> {
    const consumer = new this.#module.KafkaConsumer(readerConfig(this.#connection, name), {});
    consumer.on("event.error", () => {});
    return RdkafkaReader.open(consumer, partitions, records);
  }

  async close(): Promise<void> {
    await Promise.race([
      callVoid((cb) => this.#control.disconnect(cb)).catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
    ]);
  }
}

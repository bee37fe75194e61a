import { LinkStates } from "@ruststream/core/broker";
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
import { closingWatch, type WatchedClient } from "../watchedClient.js";
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
import {
  call,
  callVoid,
  type RdClient,
  type RdError,
  type RdModule,
  type RdProducer,
} from "./rdkafka.js";
import { RdkafkaReader } from "./reader.js";
import { RdkafkaTransactionalProducer } from "./transactions.js";
import { refusesLogin, watchClient } from "./watch.js";

/** The librdkafka engine: @confluentinc/kafka-javascript's node-rdkafka style clients. */
export class RdkafkaLink implements Link {
  readonly kind = "librdkafka" as const;
  readonly admin: LinkAdmin;
  /** Every producer's, consumer's and reader's connections (the control client's are not polled). */
  readonly states = new LinkStates();
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
      if (refusesLogin(error)) refused(error);
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
    const watched = this.#watch(producer);
    try {
      await call((cb) => producer.connect({ timeout: this.#connectTimeoutMs }, cb));
    } catch (error) {
      watched.close();
      throw error;
    }
    return closingWatch(new RdkafkaProducer(producer), watched);
  }

  /** Counts `client` in `states` from its error events (watch.ts). */
  #watch(client: RdClient): WatchedClient {
    return watchClient(client, this.states, this.#connection.brokers.join(","));
  }

  async transactionalProducer(
    settings: ProducerSettings,
    transactionalId: string,
  ): Promise<LinkTransactionalProducer> {
    const config = transactionalProducerConfig(this.#connection, settings, transactionalId);
    // Called again for each producer that replaces one after an aborted transaction: the newest
    // is the one watched.
    let watched: WatchedClient | undefined;
    const connect = async (): Promise<RdProducer> => {
      const producer = new this.#module.Producer(config);
      watched?.close();
      watched = this.#watch(producer);
      await call((cb) => producer.connect({ timeout: this.#connectTimeoutMs }, cb));
      return producer;
    };
    const unwatch = { close: () => watched?.close() };
    try {
      return closingWatch(
        await RdkafkaTransactionalProducer.open(connect, this.#connectTimeoutMs),
        unwatch,
      );
    } catch (error) {
      unwatch.close();
      throw error;
    }
  }

  consumer(settings: ConsumerSettings, hooks: ConsumerHooks): LinkConsumer {
    const config = consumerConfig(this.#connection, settings);
    let watched: WatchedClient | undefined;
    const consumer = new RdkafkaConsumer(
      (rebalance) => {
        const client = new this.#module.KafkaConsumer({ ...config, rebalance_cb: rebalance }, {});
        watched = this.#watch(client);
        return client;
      },
      settings.group,
      settings.topics,
      hooks,
      settings.commit !== "auto",
    );
    return closingWatch(consumer, { close: () => watched?.close() });
  }

  async reader(
    name: string,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ): Promise<LinkReader> {
    const consumer = new this.#module.KafkaConsumer(readerConfig(this.#connection, name), {});
    const watched = this.#watch(consumer);
    try {
      return closingWatch(await RdkafkaReader.open(consumer, partitions, records), watched);
    } catch (error) {
      watched.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    await Promise.race([
      callVoid((cb) => this.#control.disconnect(cb)).catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
    ]);
  }
}

import type { ResolvedConnection } from "../connectionOptions.js";
import { loadClient } from "../load.js";
import type {
  ConsumerHooks,
  ConsumerSettings,
  EngineAdmin,
  EngineConsumer,
  EngineProducer,
  KafkaEngine,
  ProducerSettings,
} from "../port.js";
import { RdkafkaAdmin } from "./admin.js";
import { connectionConfig, consumerConfig, producerConfig } from "./config.js";
import { RdkafkaConsumer } from "./consumer.js";
import { RdkafkaProducer } from "./producer.js";
import { call, callVoid, type RdModule, type RdProducer } from "./rdkafka.js";

/** The librdkafka engine: @confluentinc/kafka-javascript's node-rdkafka style clients. */
export class RdkafkaEngine implements KafkaEngine {
  readonly kind = "librdkafka" as const;
  readonly admin: EngineAdmin;
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
    this.admin = new RdkafkaAdmin(control, module.AdminClient.createFrom(control));
  }

  /** Loads the client and opens one control connection, which proves the cluster answers. */
  static async connect(
    connection: ResolvedConnection,
    connectTimeoutMs: number,
  ): Promise<RdkafkaEngine> {
    const module = await loadClient<RdModule>(
      "librdkafka",
      () => import("@confluentinc/kafka-javascript"),
    );
    const control = new module.Producer(connectionConfig(connection));
    control.on("event.error", () => {});
    await call((cb) => control.connect({ timeout: connectTimeoutMs }, cb));
    return new RdkafkaEngine(module, connection, control, connectTimeoutMs);
  }

  async producer(settings: ProducerSettings): Promise<EngineProducer> {
    const producer = new this.#module.Producer(producerConfig(this.#connection, settings));
    producer.on("event.error", () => {});
    await call((cb) => producer.connect({ timeout: this.#connectTimeoutMs }, cb));
    return new RdkafkaProducer(producer);
  }

  consumer(settings: ConsumerSettings, hooks: ConsumerHooks): EngineConsumer {
    const config = consumerConfig(this.#connection, settings);
    return new RdkafkaConsumer(
      (rebalance) => {
        const consumer = new this.#module.KafkaConsumer({ ...config, rebalance_cb: rebalance }, {});
        consumer.on("event.error", () => {});
        return consumer;
      },
      settings.topics,
      hooks,
      settings.commit === "tracked",
    );
  }

  async close(): Promise<void> {
    await Promise.race([
      callVoid((cb) => this.#control.disconnect(cb)).catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
    ]);
  }
}

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
import { KeyPartitioner } from "../partitioners.js";
import { closingWatch } from "../watchedClient.js";
import { withTimeout } from "../withTimeout.js";
import { KafkajsAdmin } from "./admin.js";
import { boundedGzipCodec } from "./boundedGzip.js";
import { applyOptions, clientConfig } from "./config.js";
import { KafkajsConsumer } from "./consumer.js";
import type { KjsAdmin, KjsConfig, KjsKafka, KjsModule, KjsPartitioner } from "./kafkajs.js";
import { KafkajsProducer } from "./producer.js";
import { KafkajsReader } from "./reader.js";
import { subscribedRoundRobin } from "./subscribedRoundRobin.js";
import { KafkajsTransactionalProducer } from "./transactions.js";
import { watchConsumer, watchRequests } from "./watch.js";

// How long a fetch waits on the broker for records (kafkajs's default is 5 s): a seek or a pause
// takes effect at the next fetch, so it bounds how long they take.
const FETCH_WAIT_MS = 200;

// Records a fetch may bring per partition: 4 MiB, not kafkajs's 1 MiB. Draining a backlog, a raw
// kafkajs loop ran 1.8 times as fast with it (tooling/bench/README.md, "Kafka"); it bounds how much
// one fetch holds in memory per partition, so it was not raised further for the little more 8 and
// 16 MiB gave.
const FETCH_BYTES_PER_PARTITION = 4 * 1024 * 1024;

/** The kafkajs engine: pure JavaScript, for places without a native build. */
export class KafkajsLink implements Link {
  readonly kind = "kafkajs" as const;
  readonly admin: LinkAdmin;
  /** Every consumer's (reader's) and producer's connections, from what kafkajs says (watch.ts). */
  readonly states = new LinkStates();
  readonly #module: KjsModule;
  readonly #kafka: KjsKafka;
  readonly #control: KjsAdmin;

  private constructor(module: KjsModule, kafka: KjsKafka, control: KjsAdmin) {
    this.#module = module;
    this.#kafka = kafka;
    this.#control = control;
    this.admin = new KafkajsAdmin(control, module.ConfigResourceTypes.BROKER ?? 4);
  }

  /** Loads kafkajs and opens its admin connection, which proves the cluster answers. */
  static async connect(
    connection: ResolvedConnection,
    connectTimeoutMs: number,
  ): Promise<KafkajsLink> {
    const module = await loadClient<KjsModule>("kafkajs", () => import("kafkajs"));
    // Every kafkajs of the process inflates gzip through the registry: bounded from here on.
    const gzipCodec = boundedGzipCodec();
    module.CompressionCodecs[module.CompressionTypes.GZIP] = () => gzipCodec;
    const config = clientConfig(connection, module.logLevel.NOTHING);
    config.connectionTimeout ??= Math.min(connectTimeoutMs, 10_000);
    const kafka = new module.Kafka(config);
    const control = kafka.admin();
    try {
      await withTimeout(
        control.connect(),
        connectTimeoutMs,
        () => new Error(`connecting to the cluster took longer than ${connectTimeoutMs} ms`),
      );
    } catch (error) {
      // kafkajs keeps retrying in the background otherwise.
      void control.disconnect().catch(() => undefined);
      throw error;
    }
    return new KafkajsLink(module, kafka, control);
  }

  async producer(settings: ProducerSettings): Promise<LinkProducer> {
    const producer = this.#kafka.producer(this.#producerOptions(settings));
    await producer.connect();
    const requests = watchRequests(this.states, this.#control);
    return closingWatch(
      new KafkajsProducer(producer, this.#compression(settings), requests.request),
      requests,
    );
  }

  async transactionalProducer(
    settings: ProducerSettings,
    transactionalId: string,
  ): Promise<LinkTransactionalProducer> {
    // Transactions need the idempotent producer, which kafkajs allows one request in flight.
    const options = this.#producerOptions(settings, {
      transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    const producer = this.#kafka.producer(options);
    await producer.connect();
    const requests = watchRequests(this.states, this.#control);
    return closingWatch(
      new KafkajsTransactionalProducer(producer, this.#compression(settings), requests.request),
      requests,
    );
  }

  /** A producer's options: the broker's partitioner, then `extra`, then the policy's raw entries. */
  #producerOptions(settings: ProducerSettings, extra: KjsConfig = {}): KjsConfig {
    const partitioner = new KeyPartitioner(settings.partitioner);
    // The same key-to-partition mapping as librdkafka's (and the in-process stand-in's), either way.
    // kafkajs hands every record to the partitioner, an explicit partition included, and sends it
    // where the partitioner says: the record's own partition wins, as in kafkajs's own partitioners.
    // The message is the producer's own object (producer.ts), and the choice is written on it: a
    // retried request then puts a keyless record where its first try did, and the producer reads
    // each record's partition back for its delivery report.
    const createPartitioner: KjsPartitioner =
      () =>
      ({ topic, partitionMetadata, message }) => {
        if (message.partition !== undefined) return message.partition;
        const key = message.key;
        message.partition = partitioner.pick(
          topic,
          key === null ? undefined : key,
          partitionMetadata.length,
        );
        return message.partition;
      };
    return applyOptions({ createPartitioner, ...extra }, settings.config);
  }

  #compression(settings: ProducerSettings): number | undefined {
    return settings.compression === "gzip" ? this.#module.CompressionTypes.GZIP : undefined;
  }

  consumer(settings: ConsumerSettings, hooks: ConsumerHooks): LinkConsumer {
    const options: KjsConfig = {
      groupId: settings.group,
      maxWaitTimeInMs: FETCH_WAIT_MS,
      maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
      // Records of aborted transactions are never handed over, and none past an open transaction's
      // first record: kafkajs's default, stated here (a descriptor's raw entry still may change it).
      readUncommitted: false,
      partitionAssigners: [subscribedRoundRobin(this.#module.AssignerProtocol)],
    };
    applyOptions(options, settings.config);
    const consumer = this.#kafka.consumer(options);
    return closingWatch(
      new KafkajsConsumer(
        consumer,
        this.#control,
        {
          group: settings.group,
          topics: settings.topics,
          tracked: settings.commit !== "auto",
          fromBeginning: settings.start === "earliest",
        },
        hooks,
      ),
      watchConsumer(consumer, this.states),
    );
  }

  reader(
    name: string,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ): Promise<LinkReader> {
    const topics = [...new Set(partitions.map((p) => p.topic))];
    return KafkajsReader.open(
      (hooks) =>
        this.consumer(
          {
            group: name,
            topics,
            commit: "tracked",
            start: undefined,
            assignment: undefined,
            config: [],
          },
          hooks,
        ),
      this.#control,
      name,
      partitions,
      records,
    );
  }

  async close(): Promise<void> {
    await withTimeout(
      this.#control.disconnect(),
      10_000,
      () => new Error("closing took longer than 10000 ms"),
    ).catch(() => undefined);
  }
}

import type { Coordinator } from "@ruststream/core/broker";
import type {
  ConsumedRecord,
  ConsumerHooks,
  ConsumerSettings,
  DeliveryReport,
  Link,
  LinkAdmin,
  LinkConsumer,
  LinkProducer,
  LinkReader,
  LinkTransactionalProducer,
  Partitioner,
  PartitionOffset,
  ProducedRecord,
  ProducerSettings,
  TransactionOffsets,
  Watermarks,
} from "../client/link.js";
import { partitionKey } from "../client/link.js";
import { KeyPartitioner } from "../client/partitioners.js";
import type { ClusterTransaction, InProcessCluster } from "./cluster.js";
import { InProcessConsumer } from "./consumer.js";
import { InProcessReader } from "./reader.js";

/** A producer onto the stand-in: the partitioner the settings name, then a synchronous append. */
class InProcessProducer implements LinkProducer {
  readonly #cluster: InProcessCluster;
  readonly #partitioner: KeyPartitioner;

  constructor(cluster: InProcessCluster, partitioner: Partitioner) {
    this.#cluster = cluster;
    this.#partitioner = new KeyPartitioner(partitioner);
  }

  appendNow(record: ProducedRecord, transaction?: ClusterTransaction): ConsumedRecord {
    this.#cluster.createTopic(record.topic, undefined);
    const count = this.#cluster.partitions(record.topic) ?? 1;
    const partition = record.partition ?? this.#partitioner.pick(record.topic, record.key, count);
    return this.#cluster.append({ ...record, partition }, transaction);
  }

  async send(record: ProducedRecord): Promise<DeliveryReport> {
    const stored = this.appendNow(record);
    return { partition: stored.partition, offset: stored.offset };
  }

  async flush(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {}
}

/**
 * A transactional producer onto the stand-in: the records appended inside a cluster transaction,
 * which ends committed, or aborted when an append is refused (what it appended stays in the log,
 * invisible, as on the server).
 */
class InProcessTransactionalProducer implements LinkTransactionalProducer {
  readonly #cluster: InProcessCluster;
  readonly #producer: InProcessProducer;

  constructor(cluster: InProcessCluster, partitioner: Partitioner) {
    this.#cluster = cluster;
    this.#producer = new InProcessProducer(cluster, partitioner);
  }

  async commit(
    records: readonly ProducedRecord[],
    offsets?: TransactionOffsets,
  ): Promise<DeliveryReport[]> {
    const transaction = this.#cluster.begin();
    const reports: DeliveryReport[] = [];
    try {
      for (const record of records) {
        const stored = this.#producer.appendNow(record, transaction);
        reports.push({ partition: stored.partition, offset: stored.offset });
      }
    } catch (error) {
      this.#cluster.end(transaction, "aborted");
      throw error;
    }
    // The group's positions move with the records, in the same synchronous step.
    if (offsets !== undefined) {
      const committed = this.#cluster.group(offsets.group).committed;
      for (const o of offsets.offsets) committed.set(partitionKey(o), o.offset);
    }
    this.#cluster.end(transaction, "committed");
    return reports;
  }

  async close(): Promise<void> {}
}

class InProcessAdmin implements LinkAdmin {
  readonly countsBacklog = true;
  readonly #cluster: InProcessCluster;

  constructor(cluster: InProcessCluster) {
    this.#cluster = cluster;
  }

  async partitions(topic: string): Promise<number | undefined> {
    return this.#cluster.partitions(topic);
  }

  async createTopic(topic: string, partitions: number | undefined): Promise<void> {
    this.#cluster.createTopic(topic, partitions);
  }

  async deleteTopic(topic: string): Promise<void> {
    this.#cluster.deleteTopic(topic);
  }

  async requestAutoCreate(topic: string): Promise<void> {
    // A single-node cluster with its defaults creates topics on request.
    this.#cluster.createTopic(topic, undefined);
  }

  async watermarks(topic: string, partition: number): Promise<Watermarks> {
    return this.#cluster.watermarks(topic, partition);
  }

  async offsetForTime(topic: string, partition: number, ms: number): Promise<bigint | undefined> {
    return this.#cluster.offsetForTime(topic, partition, ms);
  }

  async topicWatermarks(topic: string): Promise<ReadonlyMap<number, Watermarks> | undefined> {
    return this.#cluster.topicWatermarks(topic);
  }

  async groupOffsets(
    group: string,
    topics: readonly string[],
  ): Promise<ReadonlyMap<string, bigint>> {
    return this.#cluster.groupOffsets(group, topics);
  }
}

/** The engine of the in-process mode: the broker's own code over the stand-in of a cluster. */
export class InProcessLink implements Link {
  readonly kind = "in-process" as const;
  readonly admin: LinkAdmin;
  readonly #cluster: InProcessCluster;
  readonly #coordinator: Coordinator;

  constructor(cluster: InProcessCluster, coordinator: Coordinator) {
    this.#cluster = cluster;
    this.#coordinator = coordinator;
    this.admin = new InProcessAdmin(cluster);
  }

  async producer(settings: ProducerSettings): Promise<InProcessProducer> {
    return new InProcessProducer(this.#cluster, settings.partitioner);
  }

  async transactionalProducer(settings: ProducerSettings): Promise<LinkTransactionalProducer> {
    return new InProcessTransactionalProducer(this.#cluster, settings.partitioner);
  }

  /** A producer for the synchronous inject of a test. */
  producerNow(partitioner: Partitioner): InProcessProducer {
    return new InProcessProducer(this.#cluster, partitioner);
  }

  consumer(settings: ConsumerSettings, hooks: ConsumerHooks): LinkConsumer {
    return new InProcessConsumer(
      this.#cluster,
      this.#cluster.group(settings.group),
      {
        topics: settings.topics,
        strategy: settings.assignment ?? "range",
        tracked: settings.commit !== "auto",
      },
      hooks,
      this.#coordinator,
    );
  }

  async reader(
    _name: string,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ): Promise<LinkReader> {
    return new InProcessReader(this.#cluster, partitions, records);
  }

  async close(): Promise<void> {}
}

export type { InProcessProducer };

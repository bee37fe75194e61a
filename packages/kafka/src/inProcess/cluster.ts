import {
  type ConsumedRecord,
  type ProducedRecord,
  partitionKey,
  type TopicPartition,
  type Watermarks,
} from "../client/link.js";
import { InProcessGroup } from "./group.js";

// The in-process stand-in of a Kafka cluster: topics of partition logs, and consumer groups with
// committed offsets. It answers what the broker asks of a cluster as a single-node cluster with
// its defaults would (automatic topic creation on, one partition per new topic, a record limit of
// `message.max.bytes`), so the broker's own code runs unchanged on it. Logs keep everything: no
// retention, no compaction. Transactions are the server's: a transaction's records take offsets as
// they are appended, its end writes a control marker (one offset, never handed over) to every
// partition it touched, and readers are read_committed: they stop at the first record of a
// transaction still open (the last stable offset) and skip aborted records and markers.

/** A transaction's records, its state and the partitions it wrote to. */
export class ClusterTransaction {
  state: "open" | "committed" | "aborted" = "open";
  readonly records: ConsumedRecord[] = [];
}

/** One offset of a partition: a record (of a transaction, or not), or a transaction's marker. */
type Entry =
  | { readonly record: ConsumedRecord; readonly transaction: ClusterTransaction | undefined }
  | { readonly record: undefined; readonly marker: ClusterTransaction };

/** What a read found: the records to hand over and the offset to read from next. */
export interface ReadResult {
  readonly records: readonly ConsumedRecord[];
  readonly next: bigint;
}

/** A topic's partitions, each an array of entries indexed by offset. */
class TopicLog {
  readonly partitions: Entry[][];

  constructor(count: number) {
    this.partitions = Array.from({ length: count }, () => []);
  }
}

/**
 * Told of every record as it becomes readable (appended outside a transaction, or its transaction
 * committed), so consumers holding its partition fetch and count it; and, with no record, of a
 * partition an aborted transaction ended on, so its readers move past what it left.
 */
export type AppendListener = (tp: TopicPartition, record: ConsumedRecord | undefined) => void;

/** The cluster's answer to a record it refuses, shaped like a client's error. */
export class ClusterError extends Error {
  readonly type: string;

  constructor(type: string, message: string) {
    super(message);
    this.name = "ClusterError";
    this.type = type;
  }
}

export class InProcessCluster {
  /** The broker default `message.max.bytes`: the largest record batch a topic takes. */
  static readonly maxMessageBytes = 1_048_588;
  readonly #topics = new Map<string, TopicLog>();
  readonly #groups = new Map<string, InProcessGroup>();
  readonly #listeners = new Set<AppendListener>();

  partitions(topic: string): number | undefined {
    return this.#topics.get(topic)?.partitions.length;
  }

  /** Creates a topic; an existing one keeps its partitions, as the cluster's TOPIC_ALREADY_EXISTS. */
  createTopic(topic: string, partitions: number | undefined): void {
    if (!this.#topics.has(topic)) this.#topics.set(topic, new TopicLog(partitions ?? 1));
  }

  /** Deletes a topic and its logs; one it does not have is fine, as on the cluster. */
  deleteTopic(topic: string): void {
    this.#topics.delete(topic);
  }

  /** Appends a record to a partition already chosen; a missing topic is created first. */
  append(
    record: ProducedRecord & { readonly partition: number },
    transaction?: ClusterTransaction,
  ): ConsumedRecord {
    if (transaction !== undefined && transaction.state !== "open") {
      throw new ClusterError("INVALID_TXN_STATE", `the transaction is ${transaction.state}`);
    }
    this.createTopic(record.topic, undefined);
    const log = this.#topics.get(record.topic)!.partitions[record.partition];
    if (log === undefined) {
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `topic "${record.topic}" has no partition ${record.partition}`,
      );
    }
    let size = record.value.length + (record.key?.length ?? 0);
    for (const [name, value] of record.headers) size += Buffer.byteLength(name) + value.length;
    if (size > InProcessCluster.maxMessageBytes) {
      throw new ClusterError(
        "MESSAGE_TOO_LARGE",
        `a record of ${size} bytes is over the cluster's message.max.bytes (${InProcessCluster.maxMessageBytes})`,
      );
    }
    const stored: ConsumedRecord = {
      topic: record.topic,
      partition: record.partition,
      offset: BigInt(log.length),
      key: record.key,
      value: record.value,
      headers: record.headers,
      // A record's time is wall-clock time (what a seek by time compares), never the test's clock,
      // whose origin is arbitrary.
      timestamp: Date.now(),
    };
    log.push({ record: stored, transaction });
    if (transaction === undefined) this.#readable(stored);
    else transaction.records.push(stored);
    return stored;
  }

  begin(): ClusterTransaction {
    return new ClusterTransaction();
  }

  /** Ends a transaction: a marker on each partition it wrote to, then its records readable or not. */
  end(transaction: ClusterTransaction, outcome: "committed" | "aborted"): void {
    if (transaction.state !== "open") {
      throw new ClusterError("INVALID_TXN_STATE", `the transaction is ${transaction.state}`);
    }
    transaction.state = outcome;
    const touched = new Map<string, TopicPartition>();
    for (const { topic, partition } of transaction.records) {
      touched.set(`${partition}:${topic}`, { topic, partition });
    }
    for (const { topic, partition } of touched.values()) {
      this.#topics
        .get(topic)!
        .partitions[partition]!.push({ record: undefined, marker: transaction });
    }
    if (outcome === "committed") for (const r of transaction.records) this.#readable(r);
    else
      for (const tp of touched.values())
        for (const listener of this.#listeners) listener(tp, undefined);
  }

  #readable(record: ConsumedRecord): void {
    for (const listener of this.#listeners) listener(record, record);
  }

  /**
   * What a read_committed reader gets from `offset` on, at most `max` records: it skips markers and
   * aborted records and stops at a record whose transaction is still open, so `next` never passes it.
   */
  read(topic: string, partition: number, offset: bigint, max: number): ReadResult {
    const log = this.#topics.get(topic)?.partitions[partition] ?? [];
    const records: ConsumedRecord[] = [];
    let at = Number(offset);
    for (; at < log.length && records.length < max; at++) {
      const entry = log[at]!;
      if (entry.record === undefined) continue;
      const state = entry.transaction?.state ?? "committed";
      if (state === "open") break;
      if (state === "committed") records.push(entry.record);
    }
    return { records, next: BigInt(at) };
  }

  /**
   * The offsets from `offset` on a read_committed reader is handed: records outside transactions and
   * of committed ones (an open transaction's become readable, and are announced, when it commits).
   */
  readableOffsets(topic: string, partition: number, offset: bigint): bigint[] {
    const log = this.#topics.get(topic)?.partitions[partition] ?? [];
    const found: bigint[] = [];
    for (let at = Number(offset); at < log.length; at++) {
      const entry = log[at]!;
      if (entry.record === undefined) continue;
      if ((entry.transaction?.state ?? "committed") === "committed") found.push(BigInt(at));
    }
    return found;
  }

  watermarks(topic: string, partition: number): Watermarks {
    const log = this.#topics.get(topic)?.partitions[partition];
    if (log === undefined) {
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `topic "${topic}" has no partition ${partition}`,
      );
    }
    return { low: 0n, high: BigInt(log.length) };
  }

  /**
   * Every partition's watermarks, its end the last stable offset (the first record of a
   * transaction still open, else the log's end: what a read_committed ListOffsets answers), or
   * `undefined` for a topic the cluster has not.
   */
  topicWatermarks(topic: string): Map<number, Watermarks> | undefined {
    const log = this.#topics.get(topic);
    if (log === undefined) return undefined;
    return new Map(
      log.partitions.map((entries, partition) => {
        const open = entries.findIndex(
          (e) => e.record !== undefined && e.transaction?.state === "open",
        );
        return [partition, { low: 0n, high: BigInt(open === -1 ? entries.length : open) }];
      }),
    );
  }

  /** The offsets `group` committed for the partitions of `topics`, as an admin reads them. */
  groupOffsets(group: string, topics: readonly string[]): Map<string, bigint> {
    const committed = this.#groups.get(group)?.committed;
    const found = new Map<string, bigint>();
    for (const topic of topics) {
      for (let partition = 0; partition < (this.partitions(topic) ?? 0); partition++) {
        const key = partitionKey({ topic, partition });
        const offset = committed?.get(key);
        if (offset !== undefined) found.set(key, offset);
      }
    }
    return found;
  }

  offsetForTime(topic: string, partition: number, ms: number): bigint | undefined {
    const log = this.#topics.get(topic)?.partitions[partition] ?? [];
    return log.find((e) => e.record !== undefined && e.record.timestamp >= ms)?.record?.offset;
  }

  group(id: string): InProcessGroup {
    let group = this.#groups.get(id);
    if (group === undefined) {
      group = new InProcessGroup(this);
      this.#groups.set(id, group);
    }
    return group;
  }

  listen(listener: AppendListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

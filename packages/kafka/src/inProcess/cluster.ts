import type { ConsumedRecord, ProducedRecord, Watermarks } from "../client/port.js";
import { InProcessGroup } from "./group.js";

// The in-process stand-in of a Kafka cluster: topics of partition logs, and consumer groups with
// committed offsets. It answers what the broker asks of a cluster as a single-node cluster with
// its defaults would (automatic topic creation on, one partition per new topic, a record limit of
// `message.max.bytes`), so the broker's own code runs unchanged on it. Logs keep everything: no
// retention, no compaction, no transactions.

/** A topic's partitions, each an array indexed by offset. */
class TopicLog {
  readonly partitions: ConsumedRecord[][];

  constructor(count: number) {
    this.partitions = Array.from({ length: count }, () => []);
  }
}

/** Told of every record appended, so consumers holding its partition fetch and count it. */
export type AppendListener = (record: ConsumedRecord) => void;

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

  /** Appends a record to a partition already chosen; a missing topic is created first. */
  append(record: ProducedRecord & { readonly partition: number }): ConsumedRecord {
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
    log.push(stored);
    for (const listener of this.#listeners) listener(stored);
    return stored;
  }

  /** The records of a partition from `offset` on, at most `max`. */
  read(topic: string, partition: number, offset: bigint, max: number): readonly ConsumedRecord[] {
    const log = this.#topics.get(topic)?.partitions[partition] ?? [];
    return log.slice(Number(offset), Number(offset) + max);
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

  offsetForTime(topic: string, partition: number, ms: number): bigint | undefined {
    const log = this.#topics.get(topic)?.partitions[partition] ?? [];
    const found = log.find((r) => r.timestamp >= ms);
    return found?.offset;
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

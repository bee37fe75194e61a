// The Link: the port between the broker and a Kafka client (the name the Redis and Pulsar packages
// give their own), everything the broker needs from the cluster, in the broker's own terms. Three
// implementations stand behind it, one per engine: librdkafka (through
// @confluentinc/kafka-javascript), kafkajs, and the in-process stand-in of a cluster TestApp runs
// on. Above this file nothing knows which one is there; below it each engine maps these calls onto
// its client, so a settlement, a seek or a rebalance runs the same code whichever engine serves it.
// Offsets are bigint on this side of the port; an engine whose client speaks numbers or strings
// converts at its edge.

import type { LinkStates } from "@ruststream/core/broker";

/** One partition of one topic. */
export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** A partition and an offset in it (for a commit: the next offset to read). */
export interface PartitionOffset extends TopicPartition {
  readonly offset: bigint;
}

/** A record as the cluster handed it over. */
export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  /** The record key; `undefined` for a record without one (a null key). */
  readonly key: Uint8Array | undefined;
  /** The value; a null value arrives as empty bytes. */
  readonly value: Uint8Array;
  /** Wire headers in order; a null header value arrives as empty bytes. */
  readonly headers: ReadonlyArray<readonly [string, Uint8Array]>;
  /** The record's timestamp, milliseconds since the epoch. */
  readonly timestamp: number;
  /** Why the record cannot be read (a batch the client refused to inflate), if it cannot. */
  readonly decodeError?: Error;
}

/** A record to produce. */
export interface ProducedRecord {
  readonly topic: string;
  /** An explicit partition; otherwise the engine's partitioner picks one from the key. */
  readonly partition: number | undefined;
  readonly key: Uint8Array | undefined;
  readonly value: Uint8Array;
  readonly headers: ReadonlyArray<readonly [string, Uint8Array]>;
}

/** Where the cluster stored a produced record: its delivery report. */
export interface DeliveryReport {
  readonly partition: number;
  readonly offset: bigint;
}

/** The offsets a partition holds: the first still kept and the next to be written. */
export interface Watermarks {
  readonly low: bigint;
  readonly high: bigint;
}

export interface LinkProducer {
  /** Resolves on the delivery report; rejects with the engine's error. */
  send(record: ProducedRecord): Promise<DeliveryReport>;
  /** Waits up to `timeoutMs` for what was sent; answers how many were still unconfirmed. */
  flush(timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * A producer with a transactional id. Kafka lets one transaction at a time run on it, so the broker
 * hands it whole transactions: everything staged, produced in order and committed together.
 */
export interface LinkTransactionalProducer {
  /**
   * Begins a transaction, produces `records` in order and commits: every record becomes visible to
   * read_committed readers at once, or none does. A failure aborts what was produced (its records
   * stay in the log, invisible, with an abort marker) and rejects with the engine's error.
   */
  commit(
    records: readonly ProducedRecord[],
    offsets?: TransactionOffsets,
  ): Promise<DeliveryReport[]>;
  close(): Promise<void>;
}

/**
 * A consumer group's positions committed inside a transaction (Kafka's sendOffsetsToTransaction):
 * the consumed input and the produced output become one, so neither is ever seen without the other.
 */
export interface TransactionOffsets {
  readonly group: string;
  /** The group member whose positions these are (librdkafka sends the member's group metadata). */
  readonly consumer: LinkConsumer;
  readonly offsets: readonly PartitionOffset[];
}

export interface LinkAdmin {
  /**
   * Whether a subscription's backlog is counted through this admin at each metrics scrape
   * (`groupOffsets` and `topicWatermarks`). Not on librdkafka: its admin aborted the process
   * (`rd_kafka_enq_once_del_source_return: Assertion eonce->refcnt > 0`) when a scrape asked while
   * its broker was restarting, and a scrape must never end a service.
   */
  readonly countsBacklog: boolean;
  /** The partition count of `topic`, or `undefined` where the cluster has no such topic. */
  partitions(topic: string): Promise<number | undefined>;
  /** Creates `topic` with `partitions` (`undefined`: the cluster's default); an existing one is fine. */
  createTopic(
    topic: string,
    partitions: number | undefined,
    replicationFactor: number | undefined,
  ): Promise<void>;
  /** Deletes `topic`; one the cluster no longer has is fine. */
  deleteTopic(topic: string): Promise<void>;
  /**
   * Asks for `topic` the way a client's metadata request does when it may create topics, so a
   * cluster with automatic topic creation on makes it with its defaults, and one with it off does not.
   */
  requestAutoCreate(topic: string): Promise<void>;
  watermarks(topic: string, partition: number): Promise<Watermarks>;
  /** The first offset whose timestamp is at or after `ms`, or `undefined` when no record is that late. */
  offsetForTime(topic: string, partition: number, ms: number): Promise<bigint | undefined>;
  /**
   * The watermarks of every partition of `topic`, by partition, asked together (a backlog count
   * reads them), read_committed: `high` is the last stable offset (the first record of a
   * transaction still open, else the end); `undefined` where the cluster has no such topic.
   */
  topicWatermarks(topic: string): Promise<ReadonlyMap<number, Watermarks> | undefined>;
  /**
   * The offsets `group` has committed for the partitions of `topics`, by `partitionKey`; absent
   * where it has none (none at all for a topic the cluster has not). Asked as the group's outsider
   * (the admin's request), not as a member.
   */
  groupOffsets(group: string, topics: readonly string[]): Promise<ReadonlyMap<string, bigint>>;
}

/**
 * What a consumer reports to its subscription. The engine calls them in the order things happen
 * and awaits each, so the subscription has settled its books before the engine goes on.
 */
export interface ConsumerHooks {
  /**
   * The group assigned these partitions. Answers where each starts reading; the engine starts
   * there and hands over no record of them before this resolves.
   */
  assigned(partitions: readonly TopicPartition[]): Promise<readonly PartitionOffset[]>;
  /** These partitions are being taken away: the last moment to commit for them. */
  revoked(partitions: readonly TopicPartition[]): Promise<void>;
  /** Records fetched, in offset order per partition. */
  records(records: readonly ConsumedRecord[]): void;
  /** The consumer failed for good (a fatal error, the group refused the member). */
  failed(error: unknown): void;
}

export interface LinkConsumer {
  /** Joins the group; resolves once the first assignment (possibly empty) has been applied. */
  start(): Promise<void>;
  /** The offsets the group has committed for `partitions`; absent where it has none. */
  committed(partitions: readonly TopicPartition[]): Promise<ReadonlyMap<string, bigint>>;
  /** Commits now, as a member of the group; resolves once the coordinator answered. */
  commit(offsets: readonly PartitionOffset[]): Promise<void>;
  /**
   * Records the position to commit for a partition (tracked mode); the engine commits it on its own
   * schedule, and at the latest when the partition is revoked or the consumer closes.
   */
  store(offset: PartitionOffset): void;
  /**
   * Moves the fetch position of a held partition. Once it resolves, no record of that partition
   * fetched before the seek is handed over any more.
   */
  seek(offset: PartitionOffset): Promise<void>;
  /** Stops fetching (the group membership is kept) / fetches again: the subscription's back-pressure. */
  pause(): void;
  resume(): void;
  /**
   * In-process only: the record at `offset` is settled for good, so the stand-in stops counting it
   * for the test's coordinator. A server engine has none.
   */
  readonly released?: (record: TopicPartition & { readonly offset: bigint }) => void;
  /** Commits what was stored, leaves the group and closes; bounded, never hangs. */
  close(): Promise<void>;
}

/**
 * Reads partitions outside any group's sharing (the reply inbox): from the offsets it was opened at,
 * read_committed, committing nothing, handing each fetch to the callback it was opened with.
 */
export interface LinkReader {
  /** Stops reading and closes the client, leaving nothing behind on the cluster; bounded. */
  close(): Promise<void>;
}

/** The port to the cluster: the kinds of client the broker uses, built from resolved settings. */
export interface Link {
  readonly kind: "librdkafka" | "kafkajs" | "in-process";
  /** A producer; `config` are the publish policy's own client properties, over the broker's. */
  producer(settings: ProducerSettings): Promise<LinkProducer>;
  /**
   * A transactional producer under `transactionalId` (initialised, so an older producer with the
   * same id is fenced off and its open transaction aborted).
   */
  transactionalProducer(
    settings: ProducerSettings,
    transactionalId: string,
  ): Promise<LinkTransactionalProducer>;
  consumer(settings: ConsumerSettings, hooks: ConsumerHooks): LinkConsumer;
  /**
   * A reader of `partitions` from their offsets, under `name` (unique to it: where the client needs
   * a group id, this is it, and the reader's close removes any trace of it). Resolves once it is in
   * place at those offsets (on kafkajs, once its group assigned it the partitions), so the setup is
   * over before a request's timeout starts.
   */
  reader(
    name: string,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ): Promise<LinkReader>;
  readonly admin: LinkAdmin;
  /** Closes what the engine itself opened (the admin connection); bounded. */
  close(): Promise<void>;
  /**
   * The state of every client's connections to the cluster, as one (core's LinkStates). The
   * in-process stand-in has none: nothing lies between it and the broker.
   */
  readonly states?: LinkStates;
}

/** A raw client property: the engine's own name and value, passed through untouched. */
export type ConfigValue = string | number | boolean;

/** How keys map to partitions when a record names none. */
export type Partitioner = "murmur2" | "consistent-random";

/** How a producer compresses record batches. */
export type Compression = "none" | "gzip" | "snappy" | "lz4" | "zstd";

export interface ProducerSettings {
  readonly partitioner: Partitioner;
  /** `undefined`: the client's default (none). */
  readonly compression: Compression | undefined;
  /** Client properties the publish policy adds, over the broker's. */
  readonly config: ReadonlyArray<readonly [string, ConfigValue]>;
}

/** Where a group without a committed offset starts. */
export type StartSpec = "earliest" | "latest" | { readonly timestamp: number };

export type AssignmentStrategy = "range" | "roundrobin" | "cooperative-sticky";

export interface ConsumerSettings {
  readonly group: string;
  readonly topics: readonly string[];
  /**
   * `tracked`: the broker stores positions; `auto`: the client commits what it handed out;
   * `transactional`: the client commits nothing (positions go into the transactions), apart from
   * the start offsets the broker commits at assignment.
   */
  readonly commit: "auto" | "tracked" | "transactional";
  /** Where a partition without a committed offset starts, when the descriptor says. */
  readonly start: StartSpec | undefined;
  readonly assignment: AssignmentStrategy | undefined;
  /** Client properties the descriptor adds, over the broker's. */
  readonly config: ReadonlyArray<readonly [string, ConfigValue]>;
}

// Each key is made once and handed out again: the tracked path asks for a record's key at fetch,
// hand-out, settle and store, and a string built anew each time was an allocation plus a fresh hash
// on every map lookup. One short string per partition a process ever reads stays here.
const partitionKeys = new Map<string, string[]>();

/** The key of a partition in maps: `topic` and partition, which no topic name can make ambiguous. */
export function partitionKey(tp: TopicPartition): string {
  let keys = partitionKeys.get(tp.topic);
  if (keys === undefined) {
    keys = [];
    partitionKeys.set(tp.topic, keys);
  }
  let key = keys[tp.partition];
  if (key === undefined) {
    key = `${tp.partition}:${tp.topic}`;
    keys[tp.partition] = key;
  }
  return key;
}

import { whileLeaderMoves } from "../leaderWait.js";
import { type LinkAdmin, partitionKey, type Watermarks } from "../link.js";
import {
  call,
  callVoid,
  type RdAdmin,
  type RdError,
  type RdMetadata,
  type RdOffsetSpec,
  type RdProducer,
} from "./rdkafka.js";

const TIMEOUT_MS = 10_000;
const TOPIC_ALREADY_EXISTS = 36;
const UNKNOWN_TOPIC_OR_PART = 3;

/**
 * Cluster questions, asked on one producer handle the engine keeps for them (metadata, watermarks,
 * offsets by time) and the admin API derived from it (topic creation).
 */
export class RdkafkaAdmin implements LinkAdmin {
  // See LinkAdmin.countsBacklog: a count asked while the broker restarts can abort the process.
  readonly countsBacklog = false;
  readonly #client: RdProducer;
  readonly #admin: RdAdmin;
  readonly #offsetSpec: RdOffsetSpec;

  constructor(client: RdProducer, admin: RdAdmin, offsetSpec: RdOffsetSpec) {
    this.#client = client;
    this.#admin = admin;
    this.#offsetSpec = offsetSpec;
  }

  async partitions(topic: string): Promise<number | undefined> {
    // All topics, not this one: asking for one topic is what creates it on a cluster that allows it.
    const metadata = await call<RdMetadata>((cb) =>
      this.#client.getMetadata({ allTopics: true, timeout: TIMEOUT_MS }, cb),
    );
    const found = metadata.topics.find((t) => t.name === topic);
    return found === undefined || found.partitions.length === 0
      ? undefined
      : found.partitions.length;
  }

  async createTopic(
    topic: string,
    partitions: number | undefined,
    replicationFactor: number | undefined,
  ): Promise<void> {
    try {
      await callVoid((cb) =>
        this.#admin.createTopic(
          { topic, num_partitions: partitions ?? -1, replication_factor: replicationFactor ?? -1 },
          TIMEOUT_MS,
          cb,
        ),
      );
    } catch (error) {
      if ((error as { code?: unknown }).code !== TOPIC_ALREADY_EXISTS) throw error;
    }
  }

  async deleteTopic(topic: string): Promise<void> {
    try {
      await callVoid((cb) => this.#admin.deleteTopic(topic, TIMEOUT_MS, cb));
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNKNOWN_TOPIC_OR_PART) throw error;
    }
  }

  async requestAutoCreate(topic: string): Promise<void> {
    // A producer's metadata request for one topic allows creation (librdkafka's
    // allow.auto.create.topics is on for producers); the cluster decides.
    await call((cb) =>
      this.#client.getMetadata({ topic, allTopics: false, timeout: TIMEOUT_MS }, cb),
    );
  }

  async watermarks(topic: string, partition: number): Promise<Watermarks> {
    // librdkafka refreshes its metadata itself on a leader change; asking again is enough.
    const offsets = await whileLeaderMoves(() =>
      call<{ lowOffset: number; highOffset: number }>((cb) =>
        this.#client.queryWatermarkOffsets(topic, partition, TIMEOUT_MS, cb),
      ),
    );
    return { low: BigInt(offsets.lowOffset), high: BigInt(offsets.highOffset) };
  }

  async offsetForTime(topic: string, partition: number, ms: number): Promise<bigint | undefined> {
    // Through the admin API: a producer handle has no offsetsForTimes of its own.
    const found = await whileLeaderMoves(async () => {
      const [answer] = await call<Array<{ offset: number; error?: RdError }>>((cb) =>
        this.#admin.listOffsets(
          [{ topic, partition, offset: new this.#offsetSpec(ms) }],
          { timeout: TIMEOUT_MS },
          cb,
        ),
      );
      if (answer?.error) throw answer.error;
      return answer;
    });
    const offset = found?.offset;
    // The logical end (-1) when no record is that late.
    return offset === undefined || offset < 0 ? undefined : BigInt(offset);
  }

  async topicWatermarks(topic: string): Promise<ReadonlyMap<number, Watermarks> | undefined> {
    // Described, not read from the metadata of every topic as `partitions` does: that grows with
    // the cluster's topics (a backlog's median 38 ms on the shared cluster with it, 1.4-5.6 ms so).
    const [described] = await call<
      Array<{ error?: RdError; partitions: Array<{ partition: number }> }>
    >((cb) => this.#admin.describeTopics([topic], { timeout: TIMEOUT_MS }, cb)).catch(
      (error: unknown) => {
        if ((error as { code?: unknown }).code === UNKNOWN_TOPIC_OR_PART) return [undefined];
        throw error;
      },
    );
    if (described?.error?.code === UNKNOWN_TOPIC_OR_PART) return undefined;
    if (described?.error) throw described.error;
    const count = described?.partitions.length ?? 0;
    if (count === 0) return undefined;
    // Two ListOffsets rounds side by side (a request names a partition once): the starts, the ends;
    // read_committed, as the subscriptions read (and as kafkajs's admin asks): the end is the last
    // stable offset, so records of a transaction still open do not count yet.
    const [lows, highs] = await Promise.all([
      this.#endsOf(topic, count, this.#offsetSpec.EARLIEST),
      this.#endsOf(topic, count, this.#offsetSpec.LATEST),
    ]);
    const found = new Map<number, Watermarks>();
    for (const [partition, high] of highs) {
      found.set(partition, { low: lows.get(partition) ?? 0n, high });
    }
    return found;
  }

  async #endsOf(topic: string, count: number, spec: unknown): Promise<Map<number, bigint>> {
    const asked = Array.from({ length: count }, (_, partition) => ({
      topic,
      partition,
      offset: spec,
    }));
    const answers = await whileLeaderMoves(async () => {
      const answer = await call<Array<{ partition: number; offset: number; error?: RdError }>>(
        (cb) => this.#admin.listOffsets(asked, { timeout: TIMEOUT_MS, isolationLevel: 1 }, cb),
      );
      const failed = answer.find((a) => a.error);
      if (failed?.error) throw failed.error;
      return answer;
    });
    return new Map(answers.map((a) => [a.partition, BigInt(a.offset)]));
  }

  async groupOffsets(
    group: string,
    topics: readonly string[],
  ): Promise<ReadonlyMap<string, bigint>> {
    // Every partition the group has an offset for, in one OffsetFetch; kept those of `topics`.
    const [answer] = await call<
      Array<{
        error?: RdError;
        partitions: Array<{ topic: string; partition: number; offset: number }>;
      }>
    >((cb) =>
      this.#admin.listConsumerGroupOffsets([{ groupId: group }], { timeout: TIMEOUT_MS }, cb),
    );
    if (answer?.error) throw answer.error;
    const wanted = new Set(topics);
    const found = new Map<string, bigint>();
    for (const p of answer?.partitions ?? []) {
      if (wanted.has(p.topic) && p.offset >= 0) found.set(partitionKey(p), BigInt(p.offset));
    }
    return found;
  }
}

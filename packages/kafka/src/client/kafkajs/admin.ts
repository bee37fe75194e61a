import { whileLeaderMoves } from "../leaderWait.js";
import { type LinkAdmin, partitionKey, type Watermarks } from "../link.js";
import type { KjsAdmin } from "./kafkajs.js";

// How long a topic just created may take to show in the cluster's metadata.
const METADATA_WAIT_MS = 10_000;

/** Cluster questions over one kafkajs admin connection the engine keeps. */
export class KafkajsAdmin implements LinkAdmin {
  readonly countsBacklog = true;
  readonly #admin: KjsAdmin;
  readonly #brokerResource: number;

  constructor(admin: KjsAdmin, brokerResource: number) {
    this.#admin = admin;
    this.#brokerResource = brokerResource;
  }

  async partitions(topic: string): Promise<number | undefined> {
    try {
      const { topics } = await this.#admin.fetchTopicMetadata({ topics: [topic] });
      const found = topics.find((t) => t.name === topic);
      return found === undefined || found.partitions.length === 0
        ? undefined
        : found.partitions.length;
    } catch (error) {
      if ((error as { type?: unknown }).type === "UNKNOWN_TOPIC_OR_PARTITION") return undefined;
      throw error;
    }
  }

  async createTopic(
    topic: string,
    partitions: number | undefined,
    replicationFactor: number | undefined,
  ): Promise<void> {
    // `false` when it existed already, which is fine.
    try {
      await this.#admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic,
            ...(partitions === undefined ? {} : { numPartitions: partitions }),
            ...(replicationFactor === undefined ? {} : { replicationFactor }),
          },
        ],
      });
    } catch (error) {
      // kafkajs waits for leaders retrying only LEADER_NOT_AVAILABLE, but a busy KRaft cluster may
      // answer the metadata of a topic it has just created with UNKNOWN_TOPIC_OR_PARTITION for a
      // moment: the topic is made, so wait for its metadata instead of failing.
      if ((error as { type?: unknown }).type !== "UNKNOWN_TOPIC_OR_PARTITION") throw error;
      const deadline = Date.now() + METADATA_WAIT_MS;
      while ((await this.partitions(topic)) === undefined) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async deleteTopic(topic: string): Promise<void> {
    try {
      await this.#admin.deleteTopics({ topics: [topic] });
    } catch (error) {
      // kafkajs retries an unknown topic before giving up, then reports it as the retries' cause.
      if (!isUnknownTopic(error)) throw error;
    }
  }

  async requestAutoCreate(topic: string): Promise<void> {
    // kafkajs's admin never asks for automatic creation, so read the setting that governs it and
    // create the topic with the cluster's defaults exactly when the cluster would have.
    const { brokers } = await this.#admin.describeCluster();
    const broker = brokers[0];
    if (broker === undefined) return;
    const { resources } = await this.#admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        {
          type: this.#brokerResource,
          name: String(broker.nodeId),
          configNames: ["auto.create.topics.enable"],
        },
      ],
    });
    const entry = resources[0]?.configEntries.find(
      (e) => e.configName === "auto.create.topics.enable",
    );
    if (entry?.configValue === "true") await this.createTopic(topic, undefined, undefined);
  }

  async watermarks(topic: string, partition: number): Promise<Watermarks> {
    const offsets = await whileLeaderMoves(
      () => this.#admin.fetchTopicOffsets(topic),
      // kafkajs asks the leader its metadata names and does not refresh that on NOT_LEADER.
      () => this.#admin.fetchTopicMetadata({ topics: [topic] }),
    );
    const found = offsets.find((o) => o.partition === partition);
    if (found === undefined) throw new Error(`topic "${topic}" has no partition ${partition}`);
    return { low: BigInt(found.low), high: BigInt(found.high) };
  }

  async offsetForTime(topic: string, partition: number, ms: number): Promise<bigint | undefined> {
    const offsets = await whileLeaderMoves(
      () => this.#admin.fetchTopicOffsetsByTimestamp(topic, ms),
      () => this.#admin.fetchTopicMetadata({ topics: [topic] }),
    );
    const found = offsets.find((o) => o.partition === partition);
    if (found === undefined) return undefined;
    // kafkajs answers the high watermark when no record is that late: the same as "none".
    const { high } = await this.watermarks(topic, partition);
    const offset = BigInt(found.offset);
    return offset < 0n || offset >= high ? undefined : offset;
  }

  async topicWatermarks(topic: string): Promise<ReadonlyMap<number, Watermarks> | undefined> {
    try {
      // One call: kafkajs asks every partition's leader for the earliest and the latest offsets,
      // read_committed (its ListOffsets default): the latest is the last stable offset.
      const offsets = await whileLeaderMoves(
        () => this.#admin.fetchTopicOffsets(topic),
        () => this.#admin.fetchTopicMetadata({ topics: [topic] }),
      );
      return new Map(
        offsets.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }]),
      );
    } catch (error) {
      if (isUnknownTopic(error)) return undefined;
      throw error;
    }
  }

  async groupOffsets(
    group: string,
    topics: readonly string[],
  ): Promise<ReadonlyMap<string, bigint>> {
    try {
      return await committedOffsets(this.#admin, group, topics);
    } catch (error) {
      // kafkajs reads the topics' metadata before the OffsetFetch, and fails there for one gone:
      // no offsets, as the contract says; the watermarks asked beside say the topic is gone.
      if (isUnknownTopic(error)) return new Map();
      throw error;
    }
  }
}

/** kafkajs's unknown topic, as it came or as the cause of the retries it gave up. */
function isUnknownTopic(error: unknown): boolean {
  const failure = error as { type?: unknown; cause?: { type?: unknown } };
  return (failure.type ?? failure.cause?.type) === "UNKNOWN_TOPIC_OR_PARTITION";
}

/**
 * The offsets `group` committed for the partitions of `topics`, by `partitionKey`, from one
 * OffsetFetch through the admin connection (kafkajs answers -1 where there is none: left out).
 */
export async function committedOffsets(
  admin: KjsAdmin,
  group: string,
  topics: readonly string[],
): Promise<ReadonlyMap<string, bigint>> {
  const answer = await admin.fetchOffsets({ groupId: group, topics: [...topics] });
  const found = new Map<string, bigint>();
  for (const topic of answer) {
    for (const p of topic.partitions) {
      const offset = BigInt(p.offset);
      if (offset >= 0n)
        found.set(partitionKey({ topic: topic.topic, partition: p.partition }), offset);
    }
  }
  return found;
}

import { RustStreamError } from "@ruststream/core";
import {
  type LinkAdmin,
  type LinkConsumer,
  type PartitionOffset,
  partitionKey,
  type StartSpec,
  type TopicPartition,
} from "../client/link.js";
import type { TopicCreation } from "../sources.js";

/**
 * Where each newly assigned partition starts: its committed offset, or, for a partition the group
 * has never committed, the start the descriptor names (the client's default, the end, when it names
 * none) resolved to a concrete offset now, and committed at once. Resolved now, not left to the
 * client's reset on first fetch: a record published after `subscribe` returned is never skipped,
 * and a group that never settled anything still remembers where it began, so a second member or a
 * restart picks up from there.
 */
export async function startOffsets(
  consumer: LinkConsumer,
  admin: LinkAdmin,
  partitions: readonly TopicPartition[],
  start: StartSpec | undefined,
): Promise<PartitionOffset[]> {
  if (partitions.length === 0) return [];
  const committed = await consumer.committed(partitions);
  const starts: PartitionOffset[] = [];
  const fresh: PartitionOffset[] = [];
  for (const p of partitions) {
    const offset = committed.get(partitionKey(p));
    if (offset !== undefined) {
      starts.push({ ...p, offset });
      continue;
    }
    const resolved = { ...p, offset: await startOf(admin, p, start ?? "latest") };
    starts.push(resolved);
    fresh.push(resolved);
  }
  // Best effort: a member that loses the partition before this lands leaves it to the next owner,
  // which resolves its own start the same way.
  await consumer.commit(fresh).catch(() => undefined);
  return starts;
}

/** Where the group begins on a partition it has no committed offset for, under `start`. */
export async function startOf(
  admin: LinkAdmin,
  p: TopicPartition,
  start: StartSpec,
): Promise<bigint> {
  const { low, high } = await admin.watermarks(p.topic, p.partition);
  if (start === "earliest") return low;
  if (start === "latest") return high;
  return (await admin.offsetForTime(p.topic, p.partition, start.timestamp)) ?? high;
}

/**
 * Makes sure a topic exists before a consumer joins for it: created with the descriptor's settings
 * where it gives them, else left to the cluster's automatic creation where the cluster allows it.
 * Answers the partition count. `remedy` is what the error for a topic the cluster would not create
 * tells its user to do.
 */
export async function ensureTopic(
  admin: LinkAdmin,
  topic: string,
  create: TopicCreation | undefined,
  remedy = "create it first, or give the KafkaTopic a create option ({ create: { partitions } })",
): Promise<number> {
  const existing = await admin.partitions(topic);
  if (existing !== undefined) return existing;
  if (create !== undefined) {
    await admin.createTopic(topic, create.partitions, create.replicationFactor);
  } else {
    await admin.requestAutoCreate(topic);
  }
  // Creation is asynchronous on the cluster: wait until its metadata lists the partitions.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const count = await admin.partitions(topic);
    if (count !== undefined) return count;
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new RustStreamError(
    "invalid-argument",
    `topic "${topic}" does not exist and the cluster did not create it (automatic topic creation is off): ${remedy}`,
  );
}

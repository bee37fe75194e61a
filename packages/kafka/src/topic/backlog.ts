import { type BacklogCounts, RustStreamError } from "@ruststream/core";
import { type LinkAdmin, partitionKey, type StartSpec } from "../client/link.js";
import { withTimeout } from "../client/withTimeout.js";
import { startOf } from "./starts.js";

/**
 * How long a backlog count waits for the cluster. The clients retry a broker that is away, or a
 * topic that is gone, for far longer (kafkajs's retries, librdkafka's request timeouts): a scrape
 * must not wait on them, nor leave a question behind it per scrape.
 */
export const BACKLOG_TIMEOUT_MS = 5_000;

/** What a backlog count asks: the group, its topics, and where it starts without a commit. */
export interface BacklogQuestion {
  readonly group: string;
  readonly topics: readonly string[];
  readonly start: StartSpec | undefined;
}

/**
 * A consumer group's lag over every partition of its topics, as `ready`: the partition's end (high
 * watermark) minus the group's committed offset, or, where the group has committed none, minus
 * where it would begin (the descriptor's start, resolved as a new assignment resolves it: the end
 * by default, so nothing waits). The group's offsets and every topic's watermarks are asked side
 * by side: one OffsetFetch and one ListOffsets round per topic. Rejects after `timeoutMs` with
 * `broker-failure`, and at once when a topic is gone.
 */
export async function groupBacklog(
  admin: LinkAdmin,
  question: BacklogQuestion,
  timeoutMs = BACKLOG_TIMEOUT_MS,
): Promise<BacklogCounts> {
  return withTimeout(
    count(admin, question),
    timeoutMs,
    () =>
      new RustStreamError(
        "broker-failure",
        `the Kafka cluster did not answer the backlog of group "${question.group}" within ${timeoutMs} ms: is the cluster reachable?`,
      ),
  );
}

async function count(admin: LinkAdmin, question: BacklogQuestion): Promise<BacklogCounts> {
  const [committed, ...watermarks] = await Promise.all([
    admin.groupOffsets(question.group, question.topics),
    ...question.topics.map((topic) => admin.topicWatermarks(topic)),
  ]);
  let ready = 0n;
  for (const [i, topic] of question.topics.entries()) {
    const partitions = watermarks[i];
    if (partitions === undefined) {
      throw new RustStreamError(
        "broker-failure",
        `topic "${topic}" of group "${question.group}" is gone from the Kafka cluster: create it again, or stop the subscriber`,
      );
    }
    for (const [partition, { low, high }] of partitions) {
      const tp = { topic, partition };
      const from =
        committed.get(partitionKey(tp)) ?? (await startOf(admin, tp, question.start ?? "latest"));
      // Records the retention removed below a committed offset wait nowhere: counted from `low`.
      const waiting = high - (from > low ? from : low);
      if (waiting > 0n) ready += waiting;
    }
  }
  return { ready: Number(ready) };
}

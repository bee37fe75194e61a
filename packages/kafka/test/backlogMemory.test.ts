import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  type HeapProbe,
  type HeapSample,
  heldBytes,
  requireEnv,
  sleep,
  startHeapProbe,
  uniqueName,
} from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue 26: a subscription's memory under a backlog is bounded by its read-ahead, not by the
// backlog. A consumer (fixtures/heldConsumer.ts, the whole app in a process of its own, on the
// kafkajs engine) is held on its first record behind an empty topic, 100,000 records and 1,000,000,
// then let go to drain.
//
// What it can hold, with the defaults (README, "Memory under a backlog"): kafkajs fetches up to
// `maxBytesPerPartition` (4 MiB) of one partition at a time and hands the batch over; the
// subscription buffers up to `prefetch` (512) records and pauses the partition beyond it; the runtime
// takes batches of at most 256 with up to 256 more settling. So at most one fetch's records (as bytes
// and as decoded records) plus 512 + 2 * 256 are alive, whatever the backlog. The bound is the base
// (the same consumer on an empty topic) plus that fetch's bytes, its records at a generous
// per-record allowance, plus slack. A subscription that read the backlog at once would hold at
// least its 1,000,000 records (~100 MB of values alone): far past the bound.
//
// librdkafka keeps its fetch queue in native memory, up to its own `queued.max.messages.kbytes`
// (64 MiB by default) per partition: the resident set, not the heap, and not measured here.

const FETCH_BYTES = 4 * 1024 * 1024;
/** A record below as fetched: ~100 bytes of value, its header, the record batch's per-record bytes. */
const RECORD_BYTES = 140;
const MAX_HELD_RECORDS = Math.ceil(FETCH_BYTES / RECORD_BYTES) + 512 + 2 * 256;
/** The decoded record (key, value, headers, offsets as strings) and its delivery, the handler's promise. */
const PER_RECORD_ALLOWANCE = 1536;
const SLACK = 8 * 1024 * 1024;
const SAME_WITHIN = 4 * 1024 * 1024;
const BIG_BACKLOG = 1_000_000;
/**
 * Not 10,000 as for Redis and the file: 10,000 records (1.4 MB) fit in one fetch, so the consumer
 * would hold them all and less than behind a full fetch. 100,000 (14 MB) is past one fetch.
 */
const SMALL_BACKLOG = 100_000;
const DRAINED = 200_000;
const MiB = 1024 * 1024;

const brokers = requireEnv("KAFKA_BROKERS");
const kafka = new Kafka({
  clientId: "backlog-memory",
  brokers: [brokers],
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
const run = promisify(execFile);
const fixture = fileURLToPath(new URL("./fixtures/heldConsumer.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
const created: string[] = [];
const probes: HeapProbe[] = [];

beforeAll(async () => {
  await admin.connect();
});
afterAll(async () => {
  await Promise.all(probes.map((p) => p.stop()));
  // A million records are ~150 MB of a cluster other tests share: gone, also when the test failed.
  if (created.length > 0) await admin.deleteTopics({ topics: created }).catch(() => undefined);
  await admin.disconnect();
});

const value = JSON.stringify({ id: 1, sku: "apple", pad: "x".repeat(64) });
const filler = fileURLToPath(new URL("./fixtures/FillTopic.java", import.meta.url));

/** A topic of one partition holding `total` records, written by the Java client (FillTopic.java). */
async function backlogTopic(name: string, total: number): Promise<string> {
  const topic = uniqueName(name);
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  created.push(topic);
  if (total > 0) {
    await run(requireEnv("KAFKA_JAVA"), [
      "-cp",
      `${requireEnv("KAFKA_LIBS")}/*`,
      filler,
      brokers,
      topic,
      String(total),
      value,
    ]);
  }
  const [offsets] = await admin.fetchTopicOffsets(topic);
  expect(offsets?.high).toBe(String(total));
  return topic;
}

async function settled(probe: HeapProbe): Promise<HeapSample> {
  let largest = await probe.sample();
  for (let i = 0; i < 2; i++) {
    const next = await probe.sample();
    if (heldBytes(next) > heldBytes(largest)) largest = next;
  }
  return largest;
}

async function heldConsumer(topic: string, backlog: number): Promise<HeapProbe> {
  const group = uniqueName("backlog-group");
  const probe = await startHeapProbe({ fixture, args: [brokers, topic, group, "kafkajs"], cwd });
  probes.push(probe);
  const deadline = Date.now() + 30_000;
  while (backlog > 0 && (await probe.sample()).handled === 0) {
    if (Date.now() > deadline) throw new Error("the handler never got its first record");
    await sleep(50);
  }
  // Fetches run on while the handler is held, until the subscription pauses the partition.
  await sleep(1000);
  expect((await probe.sample()).handled).toBe(backlog === 0 ? 0 : 1);
  return probe;
}

describe("a topic subscription (kafkajs) behind a backlog", () => {
  it("holds what it fetches ahead, not the backlog: about the same behind 100,000 records and 1,000,000", async () => {
    const baseProbe = await heldConsumer(await backlogTopic("backlog-empty", 0), 0);
    const base = heldBytes(await settled(baseProbe));
    await baseProbe.stop();
    const bound = base + FETCH_BYTES + MAX_HELD_RECORDS * PER_RECORD_ALLOWANCE + SLACK;

    const smallProbe = await heldConsumer(
      await backlogTopic("backlog-100k", SMALL_BACKLOG),
      SMALL_BACKLOG,
    );
    const small = await settled(smallProbe);
    await smallProbe.stop();

    const filling = Date.now();
    const big = await backlogTopic("backlog-1m", BIG_BACKLOG);
    const fillMs = Date.now() - filling;
    const probe = await heldConsumer(big, BIG_BACKLOG);
    const held = await settled(probe);

    const draining = Date.now();
    probe.release();
    let peak = heldBytes(held);
    let handled = 0;
    while (handled < DRAINED) {
      await sleep(250);
      const sample = await probe.sample();
      handled = sample.handled;
      peak = Math.max(peak, heldBytes(sample));
      if (Date.now() - draining > 60_000) throw new Error(`drained only ${handled} in 60 s`);
    }
    const drainMs = Date.now() - draining;
    await probe.stop();

    const mb = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    console.log(
      `backlog memory (heapUsed + arrayBuffers after GC): base ${mb(base)}, behind 100k ${mb(heldBytes(small))} (rss ${mb(small.rss)}), ` +
        `behind 1M ${mb(heldBytes(held))} (rss ${mb(held.rss)}), peak draining ${handled} ${mb(peak)} in ${drainMs} ms, ` +
        `bound ${mb(bound)}; 1M written in ${fillMs} ms`,
    );
    expect(heldBytes(small)).toBeLessThan(bound);
    expect(heldBytes(held)).toBeLessThan(bound);
    expect(Math.abs(heldBytes(held) - heldBytes(small))).toBeLessThan(SAME_WITHIN);
    expect(peak).toBeLessThan(bound);
  }, 240_000);
});

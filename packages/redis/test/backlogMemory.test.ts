import { fileURLToPath } from "node:url";
import {
  drainSampled,
  type HeapProbe,
  heldBytes,
  requireEnv,
  settledSample,
  sleep,
  startHeapProbe,
  uniqueName,
} from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { eventually, inspect, pendingCount } from "./appSupport.js";

// Issue 26: a subscription's memory under a backlog is bounded by its read-ahead, not by the
// backlog. A consumer (fixtures/heldConsumer.ts, the whole app in a process of its own) is held on
// its first message behind an empty stream, 10,000 entries and 1,000,000, then let go to drain.
//
// What it can hold, with the defaults (README, "Memory under a backlog"): the runtime pulls one
// batch of at most `count` (64) entries, and the subscription reads one `XREADGROUP COUNT 64` ahead
// while that batch is handled; while draining, up to `prefetch` (256) deliveries may be settling
// besides. So at most PREFETCH + 2 * COUNT entries are alive, whatever the backlog, and the bound
// is the base (the same consumer on an empty stream) plus that many entries at a generous
// per-entry allowance, plus slack for what a forced collection leaves (allocator pages, code
// compiled once the handler runs). A subscription that read the backlog at once would hold at
// least its 1,000,000 payloads (~150 MB of entry bytes alone, more as objects): far past the bound,
// and as far apart between 10,000 and 1,000,000.

const COUNT = 64;
const PREFETCH = 256;
const MAX_HELD_ENTRIES = PREFETCH + 2 * COUNT;
/** Payload, headers, the parsed entry, its delivery, the decoded message, the handler's promise. */
const PER_ENTRY_ALLOWANCE = 4 * 1024;
const SLACK = 8 * 1024 * 1024;
/** Held behind 10,000 and behind 1,000,000, the consumer differs by at most this much. */
const SAME_WITHIN = 4 * 1024 * 1024;
const BIG_BACKLOG = 1_000_000;
const SMALL_BACKLOG = 10_000;
/** Enough draining for many read cycles (and collections) to pass through the consumer. */
const DRAINED = 200_000;
const MiB = 1024 * 1024;

const url = requireEnv("REDIS_URL");
const redis = inspect(url);
const fixture = fileURLToPath(new URL("./fixtures/heldConsumer.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
const created: string[] = [];
const probes: HeapProbe[] = [];

afterAll(async () => {
  await Promise.all(probes.map((p) => p.stop()));
  // A million entries are ~150 MB of a server other tests share: gone, also when the test failed.
  if (created.length > 0) await redis.del(...created);
  redis.disconnect();
});

/** One JSON payload of ~100 bytes, as a publisher of small events would write. */
const payload = Buffer.from(JSON.stringify({ id: 1, sku: "apple", pad: "x".repeat(64) }));

/**
 * The server appends a chunk itself: the entries are the ones a publish writes, and a client
 * building a million commands would take ~20 s of this machine where the server takes a few. A
 * chunk of 10,000 keeps the server, which other tests share, busy for only some milliseconds.
 */
const fillScript = `for i = 1, tonumber(ARGV[1]) do
  redis.call("XADD", KEYS[1], "*", "_payload", ARGV[2], "h:content-type", "application/json")
end`;

/** Appends `total` entries as the package writes them, pipelined 20,000 at a time. */
async function fill(key: string, total: number): Promise<void> {
  created.push(key);
  for (let written = 0; written < total; ) {
    const chunk = Math.min(10_000, total - written);
    await redis.eval(fillScript, 1, key, chunk, payload);
    written += chunk;
  }
}

/** Starts the consumer on `key` and waits until it is held with its read-ahead full. */
async function heldConsumer(key: string, backlog: number): Promise<HeapProbe> {
  const group = uniqueName("backlog-group");
  const probe = await startHeapProbe({ fixture, args: [url, key, group], cwd });
  probes.push(probe);
  if (backlog === 0) {
    // Nothing to read: the subscription sits in its blocking read.
    await sleep(500);
    return probe;
  }
  await eventually("the handler holds its first message", async () => {
    return (await probe.sample()).handled === 1;
  });
  // The server's side of the read-ahead: one batch handed out, one read ahead, nothing more.
  await eventually("the read-ahead is full", async () => {
    return (await pendingCount(redis, key, group)) === 2 * COUNT;
  });
  await sleep(300);
  expect(await pendingCount(redis, key, group)).toBe(2 * COUNT);
  expect((await probe.sample()).handled).toBe(1);
  return probe;
}

describe("a stream subscription behind a backlog", () => {
  it("holds what it reads ahead, not the backlog: about the same behind 10,000 entries and 1,000,000", async () => {
    const empty = uniqueName("backlog-empty");
    created.push(empty);
    const baseProbe = await heldConsumer(empty, 0);
    const base = heldBytes(await settledSample(baseProbe));
    await baseProbe.stop();
    const bound = base + MAX_HELD_ENTRIES * PER_ENTRY_ALLOWANCE + SLACK;

    const small = uniqueName("backlog-10k");
    await fill(small, SMALL_BACKLOG);
    const smallProbe = await heldConsumer(small, SMALL_BACKLOG);
    const behindSmall = heldBytes(await settledSample(smallProbe));
    await smallProbe.stop();

    const big = uniqueName("backlog-1m");
    const filling = Date.now();
    await fill(big, BIG_BACKLOG);
    const fillMs = Date.now() - filling;
    const probe = await heldConsumer(big, BIG_BACKLOG);
    const heldBig = await settledSample(probe);
    const behindBig = heldBytes(heldBig);

    // Let go: it drains while sampled, each sample after a forced collection.
    const { handled, peakHeld: peak, ms: drainMs } = await drainSampled(probe, heldBig, DRAINED);
    await probe.stop();

    const mb = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    console.log(
      `backlog memory (heapUsed + arrayBuffers after GC): base ${mb(base)}, behind 10k ${mb(behindSmall)}, ` +
        `behind 1M ${mb(behindBig)}, peak draining ${handled} ${mb(peak)} in ${drainMs} ms, ` +
        `bound ${mb(bound)}; 1M filled in ${fillMs} ms`,
    );
    expect(behindSmall).toBeLessThan(bound);
    expect(behindBig).toBeLessThan(bound);
    expect(Math.abs(behindBig - behindSmall)).toBeLessThan(SAME_WITHIN);
    expect(peak).toBeLessThan(bound);
  }, 180_000);
});

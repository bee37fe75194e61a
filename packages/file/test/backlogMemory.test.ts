import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HeaderMap } from "@ruststream/core";
import {
  drainSampled,
  type HeapProbe,
  heldBytes,
  settledSample,
  sleep,
  startHeapProbe,
} from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { encodeEnvelope, FileEncoder } from "../src/formatEntry.js";
import { tempDir } from "./tempDir.js";

// Issue 26: a subscription's memory under a backlog is bounded by its read-ahead, not by the
// backlog. A consumer (child/heldConsumer.ts, the whole app in a process of its own) is held on its
// first message behind an empty stream, 10,000 messages and 1,000,000, then let go to drain.
//
// What it can hold, with the defaults (README, "Memory under a backlog"): the file is read 1 MiB at
// a time, with the next 1 MiB read ahead while one is decoded, and the messages decoded from one
// read wait for the runtime, which takes a batch of at most `prefetch` (256) of them and, while
// draining, has up to 256 more settling. So at most one read's messages plus 256 are alive, in at
// most three reads' bytes (the one decoded, the one ahead, and the previous one a batch may still
// straddle), whatever the backlog. The bound is the base (the same consumer on an empty stream)
// plus those bytes and those messages at a generous per-message allowance, plus slack for what a
// forced collection leaves (allocator pages, code compiled once the handler runs). A subscription
// that read the backlog at once would hold at least its 1,000,000 frames (~210 MB of bytes alone):
// far past the bound, and as far apart between 10,000 and 1,000,000.

const READ_BYTES = 1024 * 1024;
const PREFETCH = 256;
/** A message below as framed in the file: 180 bytes of envelope and payload, 38 of frame. */
const FRAME_BYTES = 218;
const MAX_HELD_MESSAGES = Math.ceil(READ_BYTES / FRAME_BYTES) + 2 * PREFETCH;
/** The decoded message and its delivery, the decoded JSON, the handler's promise. */
const PER_MESSAGE_ALLOWANCE = 2 * 1024;
const SLACK = 8 * 1024 * 1024;
/** Held behind 10,000 and behind 1,000,000, the consumer differs by at most this much. */
const SAME_WITHIN = 4 * 1024 * 1024;
const BIG_BACKLOG = 1_000_000;
const SMALL_BACKLOG = 10_000;
/** Enough draining for many reads (and collections) to pass through the consumer. */
const DRAINED = 200_000;
const MiB = 1024 * 1024;
const KEY = "events";

const dir = tempDir("ruststream-file-backlog-");
const fixture = fileURLToPath(new URL("./child/heldConsumer.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
const probes: HeapProbe[] = [];
afterAll(() => Promise.all(probes.map((p) => p.stop())));

/** One JSON payload of ~100 bytes, enveloped with its content type as the broker writes it. */
const wire = encodeEnvelope(
  new TextEncoder().encode(JSON.stringify({ id: 1, sku: "apple", pad: "x".repeat(64) })),
  new HeaderMap([["content-type", "application/json"]]),
);

/**
 * A file of `total` messages on KEY, in the bytes the package's producer writes (its encoder, with
 * sequences from 1), appended 4 MiB at a time: the producer's one write per message would take
 * ~12 s of this machine for a million, the encoder alone ~1.5 s.
 */
function backlogFile(name: string, total: number): string {
  const path = join(dir, `${name}.ss`);
  const created = FileEncoder.create({
    fileName: `${name}.ss`,
    createdAt: Date.now(),
    beaconInterval: 1024 * 1024,
  });
  const encoder = created.encoder;
  const fd = openSync(path, "w");
  try {
    writeSync(fd, created.bytes);
    const timestamp = Date.now();
    let pending: Uint8Array[] = [];
    let size = 0;
    for (let seq = 1; seq <= total; seq++) {
      const frame = encoder.write({
        streamKey: KEY,
        shard: 0n,
        seq: BigInt(seq),
        timestamp,
        payload: wire,
      });
      pending.push(frame);
      size += frame.length;
      if (size >= 4 * MiB || seq === total) {
        writeSync(fd, Buffer.concat(pending));
        pending = [];
        size = 0;
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Starts the consumer on `path` and waits until it is held with its read-ahead done. */
async function heldConsumer(path: string, backlog: number): Promise<HeapProbe> {
  const probe = await startHeapProbe({ fixture, args: [path, KEY], cwd });
  probes.push(probe);
  const deadline = Date.now() + 15_000;
  while (backlog > 0 && (await probe.sample()).handled === 0) {
    if (Date.now() > deadline) throw new Error("the handler never got its first message");
    await sleep(20);
  }
  // The read ahead (one more 1 MiB read) lands meanwhile; the handler stays on its first message.
  await sleep(500);
  expect((await probe.sample()).handled).toBe(backlog === 0 ? 0 : 1);
  return probe;
}

describe("a file subscription behind a backlog", () => {
  it("holds what it reads ahead, not the backlog: about the same behind 10,000 messages and 1,000,000", async () => {
    const baseProbe = await heldConsumer(backlogFile("empty", 0), 0);
    const base = heldBytes(await settledSample(baseProbe));
    await baseProbe.stop();
    const bound = base + 3 * READ_BYTES + MAX_HELD_MESSAGES * PER_MESSAGE_ALLOWANCE + SLACK;

    const smallProbe = await heldConsumer(backlogFile("small", SMALL_BACKLOG), SMALL_BACKLOG);
    const behindSmall = heldBytes(await settledSample(smallProbe));
    await smallProbe.stop();

    const filling = Date.now();
    const big = backlogFile("big", BIG_BACKLOG);
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
        `bound ${mb(bound)}; 1M written in ${fillMs} ms`,
    );
    expect(behindSmall).toBeLessThan(bound);
    expect(behindBig).toBeLessThan(bound);
    expect(Math.abs(behindBig - behindSmall)).toBeLessThan(SAME_WITHIN);
    expect(peak).toBeLessThan(bound);
  }, 180_000);
});

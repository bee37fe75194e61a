import { describe, expect, test } from "vitest";
import { deadLetterHeaderNames } from "../../src/brokerEntry.js";
import {
  isRustStreamError,
  MemoryBroker,
  MemoryTopic,
  RustStream,
  readDeadLetterOrigin,
} from "../../src/index.js";
import { startInProcess } from "./harness.js";

// Lanes keyed by the broker partition a delivery came from, and the dead-letter origin's partition:
// shown on memory topics that stand in for a partitioned topic (partitionCount).

describe('workers(n, { key: "partition" })', () => {
  test("deliveries of one partition are handled in order, one at a time", async () => {
    const seen = new Map<number, number[]>();
    let running = 0;
    let peak = 0;
    const busy = new Set<number>();
    // Recorded, not thrown: a throw inside the handler would only retry the message.
    const overlaps: number[] = [];
    const topic = new MemoryTopic("events", { partitionCount: 4 });
    const app = new RustStream({ name: "p", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber<{ n: number }>(topic)
        .workers(4, { key: "partition" })
        .handle(async ({ n }, ctx) => {
          const partition = ctx.delivery.partition;
          if (partition === undefined) throw new Error("a partitioned topic's delivery has none");
          if (busy.has(partition)) overlaps.push(partition);
          busy.add(partition);
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, (16 - n) % 3));
          seen.set(partition, [...(seen.get(partition) ?? []), n]);
          running--;
          busy.delete(partition);
        });
    });
    const h = await startInProcess(app);
    // No key: the stand-in spreads messages over its four partitions by sequence.
    for (let n = 0; n < 16; n++) await h.running.publish("events", { n });
    await h.quiet();
    expect(overlaps, "partitions handled twice at once").toEqual([]);
    expect([...seen.keys()].sort()).toEqual([0, 1, 2, 3]);
    for (const [partition, ns] of seen) {
      expect(ns, `partition ${partition}`).toEqual([...ns].sort((a, b) => a - b));
      expect(ns.every((n) => n % 4 === partition)).toBe(true);
    }
    expect(peak, "four partitions, four lanes, all busy at once").toBe(4);
    await h.running.stop();
  });

  test("one partition's messages all go through one lane, whatever their keys", async () => {
    const topic = new MemoryTopic("events", { partitionCount: 1 });
    let running = 0;
    let peak = 0;
    const app = new RustStream({ name: "p", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber(topic)
        .workers(4, { key: "partition" })
        .handle(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 1));
          running--;
        });
    });
    const h = await startInProcess(app);
    for (const k of ["a", "b", "c", "d", "e"]) {
      await h.running.publish("events", {}, { partitionKey: k });
    }
    await h.quiet();
    expect(peak).toBe(1);
    await h.running.stop();
  });

  test("refused at startup on a source without partitions, naming the fix", async () => {
    const app = new RustStream({ name: "p", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("events")
        .workers(2, { key: "partition" })
        .handle(() => {});
    });
    await expect(app.start()).rejects.toThrow(
      /whose deliveries come from no broker partition: key by "partitionKey"/,
    );
  });

  test("an unknown key name is refused when declared", () => {
    new RustStream({ name: "p", version: "0" }).broker(new MemoryBroker(), (b) => {
      const builder = b.subscriber("events");
      let error: unknown;
      try {
        builder.workers(2, { key: "partition-key" as "partition" });
      } catch (e) {
        error = e;
      }
      expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
      expect(String(error)).toMatch(/give "partitionKey", "partition" or a function/);
    });
  });

  test("a partitionCount that is not a whole number of 1 or more is refused", () => {
    expect(() => new MemoryTopic("t", { partitionCount: 0 })).toThrow(/whole number, 1 or more/);
  });
});

describe("the dead-letter origin", () => {
  test("carries the partition the delivery came from, where it has one", async () => {
    const topic = new MemoryTopic("events", { partitionCount: 8 });
    const app = new RustStream({ name: "p", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber(topic)
        .maxAttempts(1)
        .deadLetter("events-dlq")
        .handle(() => {
          throw new Error("always");
        });
      b.subscriber("plain")
        .maxAttempts(1)
        .deadLetter("plain-dlq")
        .handle(() => {
          throw new Error("always");
        });
    });
    const h = await startInProcess(app);
    await h.running.publish("events", { n: 1 }, { partitionKey: "customer-7" });
    await h.running.publish("plain", { n: 1 });
    await h.quiet();
    const [dead] = h.published("events-dlq");
    if (dead === undefined) throw new Error("nothing dead-lettered from the partitioned topic");
    const origin = readDeadLetterOrigin(dead.headers);
    const expected = await partitionOfKey("customer-7", 8);
    expect(expected).toBeGreaterThanOrEqual(0);
    expect(expected).toBeLessThan(8);
    expect(origin).toMatchObject({ source: "events", partition: expected, reason: "max-attempts" });
    const [plain] = h.published("plain-dlq");
    if (plain === undefined) throw new Error("nothing dead-lettered from the plain topic");
    expect(readDeadLetterOrigin(plain.headers)?.partition).toBeUndefined();
    expect(plain.headers.get(deadLetterHeaderNames.partition)).toBeUndefined();
    await h.running.stop();
  });
});

/** The partition the stand-in gives a key: read off a delivery, not recomputed here. */
async function partitionOfKey(key: string, count: number): Promise<number | undefined> {
  const broker = new MemoryBroker();
  const connected = await broker.connect();
  const subscription = await connected.subscribe(
    new MemoryTopic("probe", { partitionCount: count }),
  );
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: "probe", payload: new Uint8Array(), partitionKey: key });
  const next = await subscription.next();
  if (next.done) throw new Error("probe ended");
  await connected.shutdown();
  return next.value.partition;
}

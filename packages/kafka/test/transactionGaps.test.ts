import type { Delivery } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectedKafkaBroker, KafkaBroker, KafkaTopic } from "../src/index.js";

// Tracked commits across the gaps transactions leave in a partition: an aborted transaction's
// records and every transaction's marker take offsets no delivery ever has. The watermark must still
// move past them (a settle commits the next open offset, wherever it is), and each new member of the
// group must start where the last left off: nothing read twice, nothing lost. Aborted transactions
// are written by a raw kafkajs producer (the package's own transactions stage their records and
// send nothing when they abort), so the log holds real aborted records and abort markers.

const kafka = new Kafka({
  clientId: "transaction-gaps",
  brokers: [requireEnv("KAFKA_BROKERS")],
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
const aborter = kafka.producer({
  transactionalId: uniqueName("gaps-aborter"),
  idempotent: true,
  maxInFlightRequests: 1,
});

beforeAll(async () => {
  await admin.connect();
  await aborter.connect();
});

afterAll(async () => {
  await aborter.disconnect();
  await admin.disconnect();
});

/** Writes `payloads` in a transaction and aborts it: records and a marker no reader is handed. */
async function aborted(topic: string, payloads: readonly string[]): Promise<void> {
  const tx = await aborter.transaction();
  await tx.send({ topic, messages: payloads.map((p) => ({ value: p })) });
  await tx.abort();
}

async function committedOffset(group: string, topic: string): Promise<string | undefined> {
  const [found] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  return found?.partitions.find((p) => p.partition === 0)?.offset;
}

async function take(
  subscription: Awaited<ReturnType<ConnectedKafkaBroker["subscribe"]>>,
  count: number,
): Promise<Delivery[]> {
  const got: Delivery[] = [];
  while (got.length < count) {
    const next = await subscription.next();
    if (next.done) throw new Error(`the subscription ended after ${got.length} of ${count}`);
    got.push(next.value);
  }
  return got;
}

/** The offset of a delivery: its position is `topic:partition:offset`. */
const offsetOf = (d: Delivery): bigint => BigInt(String(d.position).split(":")[2]!);

describe.each(["librdkafka", "kafkajs"] as const)("%s", (engine) => {
  it("the tracked watermark moves past aborted records and markers, and a new member reads on from there", async () => {
    const topic = uniqueName("gaps");
    const group = `group-${topic}`;
    const source = new KafkaTopic(topic, {
      group,
      commit: "tracked",
      start: "earliest",
      create: { partitions: 1 },
    });
    const broker = new KafkaBroker({
      brokers: requireEnv("KAFKA_BROKERS"),
      engine,
      transactionalId: uniqueName(`gaps-${engine}`),
    });

    const first = await broker.connect();
    const sub = await first.subscribe(source);
    const publisher = await first.defaultPublishPolicy().pair(first);
    await publisher.publish({ name: topic, payload: bytes("a0") });
    await publisher.publish({ name: topic, payload: bytes("a1") });
    await aborted(topic, ["x0", "x1", "x2"]);
    await publisher.transaction(async (tx) => tx.publish({ name: topic, payload: bytes("c0") }));
    await publisher.publish({ name: topic, payload: bytes("b0") });
    await aborted(topic, ["y0"]);

    const read = await take(sub, 4);
    expect(read.map((d) => text(d.payload))).toEqual(["a0", "a1", "c0", "b0"]);
    const [a0, a1, c0, b0] = read as [Delivery, Delivery, Delivery, Delivery];
    // The gap is there: at least the three aborted records lie between a1 and c0. (Where a marker
    // lands is the transaction coordinator's: it writes markers after answering the commit or abort,
    // so a record another producer sends at once may come before it.)
    expect(offsetOf(c0) - offsetOf(a1)).toBeGreaterThanOrEqual(4n);
    expect(offsetOf(b0)).toBeGreaterThan(offsetOf(c0));
    // Settled out of order across the gap; b0 stays open.
    expect(await c0.ack()).toBe("ok");
    expect(await a1.ack()).toBe("ok");
    expect(await a0.ack()).toBe("ok");
    const closed = await first.shutdown();
    expect(closed.returnedDeliveries).toBe(1);
    // The group's position is b0's offset: past the aborted records and both markers, not past b0.
    expect(await committedOffset(group, topic)).toBe(offsetOf(b0).toString());

    const second = await broker.connect();
    const again = await second.subscribe(source);
    const secondPublisher = await second.defaultPublishPolicy().pair(second);
    await secondPublisher.publish({ name: topic, payload: bytes("sentinel-1") });
    const resumed = await take(again, 2);
    expect(
      resumed.map((d) => text(d.payload)),
      "b0 once more, then the sentinel",
    ).toEqual(["b0", "sentinel-1"]);
    for (const d of resumed) expect(await d.ack()).toBe("ok");
    await aborted(topic, ["z0", "z1"]);
    const sentinelOffset = offsetOf(resumed[1]!);
    expect((await second.shutdown()).returnedDeliveries).toBe(0);
    expect(await committedOffset(group, topic)).toBe((sentinelOffset + 1n).toString());

    // A third member: nothing of what was settled, none of the aborted records, only what is new.
    const third = await broker.connect();
    try {
      const last = await third.subscribe(source);
      const thirdPublisher = await third.defaultPublishPolicy().pair(third);
      await thirdPublisher.publish({ name: topic, payload: bytes("sentinel-2") });
      const [only] = await take(last, 1);
      expect(text(only!.payload)).toBe("sentinel-2");
      // Past the two aborted records (and their marker, unless it landed after the sentinel).
      expect(offsetOf(only!) - sentinelOffset).toBeGreaterThanOrEqual(3n);
      expect(await only!.ack()).toBe("ok");
    } finally {
      await third.shutdown();
    }
  });
});

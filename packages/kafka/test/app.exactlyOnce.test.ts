import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { KafkaBroker, KafkaTopic } from "../src/index.js";
import { everywhere, type Where } from "./connections.js";
import { itTransactional } from "./transactionalSkips.js";

// The exactly-once pipeline through the app's runtime: a subscriber under commit "transactional"
// with `.reply(topic)`, whose replies the runtime publishes with the delivery as their cause. The
// first reply to one order is too large for the reply topic, so the cluster refuses it and that
// window's transaction aborts; the orders are handled again. Every reply must be on the reply topic
// exactly once, the refused one never. On librdkafka against the cluster, and in-process.

const ORDERS = 12;
const FAILING = 5;

const kafka = new Kafka({
  clientId: "app-exactly-once",
  brokers: [requireEnv("KAFKA_BROKERS")],
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
beforeAll(() => admin.connect());
afterAll(() => admin.disconnect());

interface Order {
  readonly id: number;
}

function service(where: Where, topic: string, replies: string, calls: Map<number, number>) {
  const broker = new KafkaBroker({
    brokers: where === "in-process" ? "127.0.0.1:9092" : requireEnv("KAFKA_BROKERS"),
    ...(where === "in-process" ? {} : { engine: where }),
    transactionalId: uniqueName(`app-eos-${where}`),
    // Past the stand-in's cluster limit, so the refusal is the cluster's there too.
    maxMessageBytes: 2_000_000,
  });
  const padding = where === "in-process" ? 1_100_000 : 4096;
  return new RustStream({ name: `eos-${topic}`, version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber(
      new KafkaTopic(topic, {
        commit: "transactional",
        start: "earliest",
        create: { partitions: 2 },
      }),
    )
      .reply(replies)
      .handle(async (message) => {
        const order = message as Order;
        const call = (calls.get(order.id) ?? 0) + 1;
        calls.set(order.id, call);
        return order.id === FAILING && call === 1
          ? { id: order.id, padding: "x".repeat(padding) }
          : { id: order.id, accepted: true };
      });
  });
}

/**
 * The reply topic's committed records, read_committed, through a sentinel published last; and the
 * sentinel's offset.
 */
async function committedReplies(replies: string): Promise<{ seen: string[]; sentinel: bigint }> {
  const connected = await new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS") }).connect();
  try {
    const subscription = await connected.subscribe(
      new KafkaTopic(replies, { group: uniqueName("reader"), start: "earliest" }),
    );
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: replies, payload: new TextEncoder().encode("sentinel") });
    const out: string[] = [];
    for (;;) {
      const next = await subscription.next();
      if (next.done) throw new Error(`${replies} ended after ${out.length} records`);
      const payload = text(next.value.payload);
      if (payload === "sentinel") return { seen: out, sentinel: next.value.offset };
      out.push(payload);
    }
  } finally {
    await connected.shutdown();
  }
}

// kafkajs refuses the mode (exactlyOnce.test.ts holds it to that): registered there as skipped.
for (const where of everywhere) {
  describe(where, () => {
    itTransactional(where)(
      "every reply exactly once while a window's transaction is refused and replayed",
      async () => {
        const topic = uniqueName(`app-eos-${where}`);
        const replies = `${topic}.replies`;
        if (where !== "in-process") {
          await admin.createTopics({
            waitForLeaders: true,
            topics: [
              {
                topic: replies,
                numPartitions: 1,
                configEntries: [{ name: "max.message.bytes", value: "2048" }],
              },
            ],
          });
        }
        const calls = new Map<number, number>();
        const app = service(where, topic, replies, calls);
        const t =
          where === "in-process"
            ? await TestApp.start(app)
            : await TestApp.startLive(app, { withinMs: 30_000 });
        let published: string[] | undefined;
        try {
          for (let id = 0; id < ORDERS; id++) await t.publish(topic, { id });
          // Every order handled, the failing one twice (its window aborted and was replayed).
          const deadline = Date.now() + 45_000;
          while (calls.size < ORDERS || (calls.get(FAILING) ?? 0) < 2) {
            if (Date.now() > deadline) {
              throw new Error(`handled ${[...calls].map(([id, n]) => `${id}x${n}`).join(" ")}`);
            }
            if (where === "in-process") await t.advance(50);
            await sleep(50);
          }
          await t.settle();
        } finally {
          // Stopping commits the last window.
          await t.stop();
          if (where === "in-process") published = t.published(replies).map((m) => text(m.payload));
        }
        const read = published === undefined ? await committedReplies(replies) : undefined;
        const seen = published ?? read!.seen;
        const ids = seen.map((p) => (JSON.parse(p) as { id: number; accepted?: boolean }).id);
        expect(
          [...ids].sort((a, b) => a - b),
          "each reply once",
        ).toEqual(Array.from({ length: ORDERS }, (_, id) => id));
        expect(
          seen.every((p) => (JSON.parse(p) as { accepted?: boolean }).accepted === true),
          "the refused reply never",
        ).toBe(true);
        expect(calls.get(FAILING)).toBeGreaterThanOrEqual(2);
        if (read !== undefined) {
          // Written in transactions: the aborted window's records and the markers take offsets, so
          // the sentinel lands past the replies' count (published one by one, it would be at it).
          expect(read.sentinel).toBeGreaterThan(BigInt(ORDERS));
          // The orders' offsets went with the replies: the group's position is the end of each partition.
          const [committed] = await admin.fetchOffsets({
            groupId: `eos-${topic}`,
            topics: [topic],
          });
          const ends = await admin.fetchTopicOffsets(topic);
          expect(committed!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual(
            ends.map((p) => [p.partition, p.high]).sort(),
          );
        }
      },
      90_000,
    );
  });
}

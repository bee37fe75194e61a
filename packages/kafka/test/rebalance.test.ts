import { type BatchSubscription, type Delivery, isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type ConnectedKafkaBroker, KafkaBroker, KafkaTopic } from "../src/index.js";

// Two consumers in one group under `tracked`, through rebalances, on the real cluster: the second
// joins mid-stream (the partitions are split between them), then the first leaves mid-stream with
// acks still pending (what it held unsettled goes to the second). Handlers settle out of order, after
// random delays, so the watermark runs with gaps. Nothing may be lost: every record is handled by one
// of them, and a third member of the group afterwards finds nothing left behind.

const TOTAL = 400;

interface Worker {
  readonly handled: Set<string>;
  /** When the last delivery arrived. */
  last: number;
  /** Acks scheduled and not yet answered. */
  pending: number;
  readonly done: Promise<void>;
}

/** Pulls batches and acks each delivery after a random delay, out of order. */
function work(subscription: BatchSubscription<Delivery>): Worker {
  const state = { handled: new Set<string>(), last: Date.now(), pending: 0 };
  const done = (async () => {
    for (;;) {
      const batch = await subscription.nextBatch(16).catch((error: unknown) => {
        if (isRustStreamError(error, "closed")) return [];
        throw error;
      });
      if (batch.length === 0) return;
      state.last = Date.now();
      for (const d of batch) {
        state.pending++;
        setTimeout(() => {
          Promise.resolve()
            .then(() => d.ack())
            .then(
              () => state.handled.add(text(d.payload)),
              // Acked after its connection shut down: left unsettled, so not handled.
              () => {},
            )
            .finally(() => state.pending--);
        }, Math.random() * 30);
      }
    }
  })();
  return Object.assign(state, { done });
}

async function waitFor(what: string, ms: number, done: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: still waiting after ${ms} ms`);
    await sleep(20);
  }
}

for (const engine of ["librdkafka", "kafkajs"] as const) {
  describe(engine, () => {
    it("two consumers in one group through two rebalances lose nothing", async () => {
      const broker = new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine });
      const topic = uniqueName(`rebalance-${engine}`);
      const source = new KafkaTopic(topic, {
        group: `g-${topic}`,
        commit: "tracked",
        create: { partitions: 4 },
        prefetch: 32,
      });
      const producer = await broker.connect();
      const connections: ConnectedKafkaBroker[] = [producer];
      const open = async () => {
        const c = await broker.connect();
        connections.push(c);
        return c;
      };
      try {
        const first = await open();
        const a = work(await first.subscribe(source));
        const publisher = await producer.defaultPublishPolicy().pair(producer);
        const publishing = (async () => {
          for (let i = 0; i < TOTAL; i++) {
            await publisher.publish({
              name: topic,
              payload: bytes(`m${i}`),
              partitionKey: `k${i % 13}`,
            });
            // Paced, so the stream is still running through both rebalances.
            if (i % 10 === 9) await sleep(100);
          }
        })();
        await waitFor("the first consumer under way", 30_000, () => a.handled.size >= 60);
        // The second joins: the group splits the partitions between them.
        const second = await open();
        const b = work(await second.subscribe(source));
        await waitFor("the second consumer under way", 30_000, () => b.handled.size >= 20);
        await waitFor(
          "the first still working after the split",
          30_000,
          () => a.handled.size >= 120,
        );
        // The first leaves mid-stream, acks still pending on their timers.
        const closed = await first.shutdown();
        await a.done;
        await publishing;
        const union = () => new Set([...a.handled, ...b.handled]);
        const all = Array.from({ length: TOTAL }, (_, i) => `m${i}`);
        await waitFor("every record handled", 60_000, () => all.every((m) => union().has(m)));
        expect(
          all.filter((m) => !union().has(m)),
          "records nobody handled",
        ).toEqual([]);
        expect(a.handled.size, "the first handled part of the stream").toBeLessThan(TOTAL);
        expect(b.handled.size, "the second handled part of the stream").toBeGreaterThan(0);
        expect(closed.closedSubscriptions).toBe(1);
        // The second has settled all it got: then what it leaves behind is exactly nothing.
        await waitFor(
          "the second idle",
          30_000,
          () => b.pending === 0 && Date.now() - b.last > 1500,
        );
        await second.shutdown();
        await b.done;
        const third = await open();
        const subscription = await third.subscribe(source);
        await publisher.publish({ name: topic, payload: bytes("sentinel"), partitionKey: "k0" });
        const leftover: string[] = [];
        for (;;) {
          const next = await subscription.next();
          if (next.done) throw new Error("the third member's subscription ended");
          await next.value.ack();
          if (text(next.value.payload) === "sentinel") break;
          leftover.push(text(next.value.payload));
        }
        expect(leftover, "what the group's commits left behind").toEqual([]);
      } finally {
        for (const c of connections) await c.shutdown();
      }
    }, 180_000);
  });
}

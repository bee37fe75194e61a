import { type Delivery, isRustStreamError } from "@ruststream/core";
import { bytes, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type ConnectedKafkaBroker, KafkaPosition, KafkaTopic } from "../src/index.js";
import { brokerFor, connect, everywhere } from "./connections.js";

// Seeks beyond what the seeking suite covers: to a time, the beginning and the end (each moving
// every partition held), an offset past a partition's end (unknown-position), and a partition this
// member does not hold (refused, naming what it holds). On both engines and in-process.

async function take(
  subscription: Awaited<ReturnType<ConnectedKafkaBroker["subscribe"]>>,
  n: number,
) {
  const out: Delivery[] = [];
  while (out.length < n) {
    const next = await subscription.next();
    if (next.done) throw new Error("the subscription ended");
    out.push(next.value);
    await next.value.ack();
  }
  return out.map((d) => text(d.payload));
}

for (const where of everywhere) {
  describe(where, () => {
    it("a time, the beginning and the end move every partition held", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const topic = uniqueName(`seek-${where}`);
        const subscription = await connected.subscribe(
          new KafkaTopic(topic, {
            group: `g-${topic}`,
            commit: "tracked",
            create: { partitions: 2 },
          }),
        );
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        for (const p of ["a0", "a1"]) {
          await publisher.publish({ name: topic, payload: bytes(p), options: { partition: 0 } });
        }
        await publisher.publish({ name: topic, payload: bytes("b0"), options: { partition: 1 } });
        expect((await take(subscription, 3)).sort()).toEqual(["a0", "a1", "b0"]);
        // Records written from here on are later than `mark`.
        await sleep(20);
        const mark = Date.now();
        await sleep(20);
        await publisher.publish({ name: topic, payload: bytes("a2"), options: { partition: 0 } });
        await publisher.publish({ name: topic, payload: bytes("b1"), options: { partition: 1 } });
        expect((await take(subscription, 2)).sort()).toEqual(["a2", "b1"]);

        await subscription.seek(KafkaPosition.timestamp(mark));
        expect((await take(subscription, 2)).sort()).toEqual(["a2", "b1"]);

        await subscription.seek(subscription.parsePosition("beginning"));
        expect((await take(subscription, 5)).sort()).toEqual(["a0", "a1", "a2", "b0", "b1"]);

        await subscription.seek(KafkaPosition.end());
        await publisher.publish({
          name: topic,
          payload: bytes("fresh"),
          options: { partition: 1 },
        });
        expect(await take(subscription, 1)).toEqual(["fresh"]);
        await subscription.close();
      } finally {
        await connected.shutdown();
      }
    }, 60_000);

    it("past the end, a partition that does not exist, a topic not read: unknown, and nothing moves", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const topic = uniqueName(`seek-refused-${where}`);
        const subscription = await connected.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}`, commit: "tracked" }),
        );
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        await publisher.publish({ name: topic, payload: bytes("p0") });
        await take(subscription, 1);
        const refusal = (position: KafkaPosition) =>
          subscription.seek(position).then(
            () => "moved",
            (error: unknown) => (isRustStreamError(error) ? error.code : String(error)),
          );
        // The partition's end (1) is a place to seek to; one past it is not.
        expect(await refusal(KafkaPosition.offset(topic, 0, 1))).toBe("moved");
        expect(await refusal(KafkaPosition.offset(topic, 0, 2))).toBe("unknown-position");
        expect(await refusal(KafkaPosition.offset(topic, 5, 0))).toBe("unknown-position");
        expect(await refusal(KafkaPosition.offset(`${topic}-other`, 0, 0))).toBe(
          "unknown-position",
        );
        expect(() => KafkaPosition.parse("not a position")).toThrow(/not a Kafka position/);
        // Nothing moved: the next record is the next one written.
        await publisher.publish({ name: topic, payload: bytes("p1") });
        expect(await take(subscription, 1)).toEqual(["p1"]);
        await subscription.close();
      } finally {
        await connected.shutdown();
      }
    }, 60_000);

    it("a settle from before a seek is dropped, never committed", async () => {
      const broker = brokerFor(where);
      const topic = uniqueName(`seek-stale-${where}`);
      const source = new KafkaTopic(topic, { group: `g-${topic}`, commit: "tracked" });
      const connected = await connect(where, broker);
      try {
        const subscription = await connected.subscribe(source);
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        for (const p of ["p0", "p1", "p2"])
          await publisher.publish({ name: topic, payload: bytes(p) });
        const pull = async () => {
          const next = await subscription.next();
          if (next.done) throw new Error("the subscription ended");
          return next.value;
        };
        expect(await (await pull()).ack()).toBe("ok");
        const before = await pull();
        expect(text(before.payload)).toBe("p1");
        await subscription.seek(before.position);
        const after = await pull();
        expect(text(after.payload)).toBe("p1");
        // The delivery from before the seek answers, but its settle counts for nothing: p1 is
        // still open (as `after`), so the committed position stays in front of it.
        expect(await before.ack()).toBe("ok");
      } finally {
        await connected.shutdown();
      }
      const again = await connect(where, broker);
      try {
        const subscription = await again.subscribe(source);
        const next = await subscription.next();
        if (next.done) throw new Error("the subscription ended");
        expect(text(next.value.payload), "the next reader starts at the record left open").toBe(
          "p1",
        );
      } finally {
        await again.shutdown();
      }
    }, 60_000);

    it("a partition another member holds is refused, naming what this one holds", async () => {
      const broker = brokerFor(where);
      const first = await connect(where, broker);
      const second = await connect(where, broker);
      try {
        const topic = uniqueName(`seek-unheld-${where}`);
        const source = new KafkaTopic(topic, { group: `g-${topic}`, commit: "tracked" });
        const holder = await first.subscribe(source);
        // One partition, two members: once the group has rebalanced, one of them holds nothing.
        const idle = await second.subscribe(source);
        const deadline = Date.now() + 30_000;
        while (holder.assignment.length + idle.assignment.length !== 1) {
          if (Date.now() > deadline) throw new Error("the group never settled on one holder");
          await sleep(50);
        }
        const empty = holder.assignment.length === 0 ? holder : idle;
        const error = await empty.seek(KafkaPosition.offset(topic, 0, 0)).catch((e: unknown) => e);
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        expect(String((error as Error).message)).toMatch(/does not hold partition 0.*holds none/);
      } finally {
        await second.shutdown();
        await first.shutdown();
      }
    }, 60_000);
  });
}

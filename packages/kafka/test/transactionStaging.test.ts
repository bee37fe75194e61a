import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, expectTypeOf, it } from "vitest";
import { KafkaTopic } from "../src/index.js";
import { brokerFor, connect, everywhere } from "./connections.js";

// `tx.publish` gives no receipt: it resolves to nothing once the record is checked and staged (core's
// `Transaction.publish` is `Promise<void>`, on every broker), since a record has no position before
// its transaction commits. The transaction resolves with what the work returned, and the records'
// positions are known from the topic once it committed. On both engines and in-process.

for (const where of everywhere) {
  describe(`${where}: tx.publish`, () => {
    it("resolves to nothing once staged; the records are on the topic after the commit", async () => {
      const topic = uniqueName(`tx-staged-${where}`);
      const connected = await connect(
        where,
        brokerFor(where, { transactionalId: uniqueName(`tx-staged-${where}`) }),
      );
      try {
        const created = await connected.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: 1 } }),
        );
        await created.close();
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        const answer = await publisher.transaction(async (tx) => {
          const staged = tx.publish({ name: topic, payload: bytes("first") });
          expectTypeOf(staged).toEqualTypeOf<Promise<void>>();
          expect(await staged).toBeUndefined();
          expect(await tx.publish({ name: topic, payload: bytes("second") })).toBeUndefined();
          return "committed";
        });
        expect(answer).toBe("committed");
        const subscription = await connected.subscribe(
          new KafkaTopic(topic, { group: uniqueName("reader"), start: "earliest" }),
        );
        const read: string[] = [];
        while (read.length < 2) {
          const next = await subscription.next();
          if (next.done) throw new Error(`${topic} ended after ${read.length} records`);
          next.value.ack();
          read.push(`${text(next.value.payload)}@${next.value.position}`);
        }
        expect(read).toEqual([`first@${topic}:0:0`, `second@${topic}:0:1`]);
      } finally {
        await connected.shutdown();
      }
    }, 60_000);
  });
}

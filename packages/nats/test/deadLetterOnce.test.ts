import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { JetStreamSubject, NatsPublish, type NatsReceipt } from "../src/index.js";
import { openedPerTest, targets } from "./targets.js";

// The runtime writes a dead letter, then acks the original: a process killed (or cut off) between
// the two leaves the original unacked, its redelivery is dead-lettered again, and the dead letter
// held it twice (found by the chaos suite's nats-jetstream-retry). A dead letter written for a
// JetStream delivery carries a Nats-Msg-Id naming that delivery's message and consumer, so the
// stream stores the second write as a duplicate. On the real server and on the stand-in alike.

const { connections, streams } = openedPerTest();

for (const [where, connect] of targets) {
  describe(`a dead letter written twice for one delivery, ${where}`, () => {
    it("is stored once; another message's dead letter is stored", async () => {
      const connected = await connect();
      connections.push(connected);
      const subject = uniqueName("dlonce");
      const deadLetter = `${subject}.dlq`;
      streams.push(subject);
      const source = (name: string, durable: string) =>
        new JetStreamSubject(name, {
          stream: subject,
          durable,
          declare: { subjects: [subject, deadLetter], storage: "memory" },
        });
      const subscription = await connected.subscribe(source(subject, "worker"));
      const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
      await publisher.publish({ name: subject, payload: bytes("a") });
      await publisher.publish({ name: subject, payload: bytes("b") });
      const a = (await subscription.next()).value;
      const b = (await subscription.next()).value;
      if (a === undefined || b === undefined) throw new Error("two deliveries were expected");
      const deadLetterOf = (delivery: typeof a) =>
        publisher.publish({
          name: deadLetter,
          payload: delivery.payload,
          deadLetterOrigin: {
            source: subject,
            position: String(delivery.position),
            reason: "max-attempts",
          },
          cause: delivery,
        }) as Promise<NatsReceipt>;
      const first = await deadLetterOf(a);
      // The same delivery's dead letter again, as after a kill between the write and the ack.
      const again = await deadLetterOf(a);
      const other = await deadLetterOf(b);
      expect([first, again, other].map((r) => [r.sequence, r.duplicate])).toEqual([
        [3n, false],
        [3n, true],
        [4n, false],
      ]);
      // A sentinel behind them: what the dead letter's reader gets before it is all it stored.
      await publisher.publish({ name: deadLetter, payload: bytes("sentinel") });
      const reader = await connected.subscribe(source(deadLetter, "reader"));
      const got: string[] = [];
      while (got.at(-1) !== "sentinel") {
        const d = (await reader.next()).value;
        if (d === undefined) break;
        got.push(text(d.payload));
        await d.ack();
      }
      expect(got).toEqual(["a", "b", "sentinel"]);
      await a.ack();
      await b.ack();
    });
  });
}

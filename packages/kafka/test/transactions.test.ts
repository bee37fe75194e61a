import { type Delivery, isRustStreamError } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type ConnectedKafkaBroker, KafkaBroker, KafkaPublish, KafkaTopic } from "../src/index.js";
import { brokerFor, connect, everywhere } from "./connections.js";
import { clientLimit, refusingTopic, tooLarge } from "./refusingTopic.js";

// The transactional publisher's settings and refusals, on both engines and in-process (what a
// transaction makes visible, and when, is the conformance suite's): a transaction without a
// transactional id is refused naming the option, a policy's id wins over the broker's, one id is one
// producer, and a staged record the cluster would refuse fails the whole transaction before
// anything is sent. A transaction the cluster itself refused leaves the next one unharmed.

async function refusal(work: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await work();
  } catch (error) {
    if (isRustStreamError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a refusal");
}

/** Reads to a sentinel published after everything else: what the transactions made visible. */
async function throughSentinel(connected: ConnectedKafkaBroker, topic: string): Promise<string[]> {
  const subscription = await connected.subscribe(
    new KafkaTopic(topic, { group: `g-${topic}`, start: "earliest" }),
  );
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: topic, payload: bytes("sentinel") });
  const seen: string[] = [];
  for (;;) {
    const next = await subscription.next();
    if (next.done) throw new Error("the subscription ended");
    const delivery: Delivery = next.value;
    await delivery.ack();
    seen.push(text(delivery.payload));
    if (seen.at(-1) === "sentinel") return seen;
  }
}

it("an empty transactional id is refused when the broker or the policy is built", () => {
  expect(() => new KafkaBroker({ brokers: "127.0.0.1:9092", transactionalId: "" })).toThrow(
    /transactionalId cannot be empty/,
  );
  expect(() => new KafkaPublish({ transactionalId: "" })).toThrow(
    /transactionalId cannot be empty/,
  );
});

for (const where of everywhere) {
  describe(where, () => {
    it("a transaction without a transactional id is refused, naming the option", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        let ran = false;
        const answer = await refusal(() =>
          publisher.transaction(async () => {
            ran = true;
          }),
        );
        expect(answer.code).toBe("invalid-argument");
        expect(answer.message).toContain("transactionalId");
        expect(answer.message).toContain("new KafkaPublish({ transactionalId })");
        expect(ran, "the work never ran").toBe(false);
      } finally {
        await connected.shutdown();
      }
    });

    it("a policy's transactional id serves it; one id with other producer settings is refused", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const topic = uniqueName(`tx-policy-${where}`);
        const id = uniqueName(`tx-policy-${where}`);
        const own = await new KafkaPublish({ transactionalId: id }).pair(connected);
        await own.transaction(async (tx) => tx.publish({ name: topic, payload: bytes("own") }));
        const other = await new KafkaPublish({
          transactionalId: id,
          partitioner: "consistent-random",
        }).pair(connected);
        const answer = await refusal(() =>
          other.transaction(async (tx) => tx.publish({ name: topic, payload: bytes("other") })),
        );
        expect(answer.code).toBe("invalid-argument");
        expect(answer.message).toContain(`"${id}"`);
        expect(await throughSentinel(connected, topic)).toEqual(["own", "sentinel"]);
      } finally {
        await connected.shutdown();
      }
    });

    it("a staged record for a partition the topic lacks fails the transaction; nothing is published", async () => {
      const connected = await connect(
        where,
        brokerFor(where, { transactionalId: uniqueName(`tx-refused-${where}`) }),
      );
      try {
        const topic = uniqueName(`tx-refused-${where}`);
        // Made with two partitions by a group of its own, so the reader below has the topic alone.
        await connected.subscribe(
          new KafkaTopic(topic, { group: `maker-${topic}`, create: { partitions: 2 } }),
        );
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        const answer = await refusal(() =>
          publisher.transaction(async (tx) => {
            await tx.publish({ name: topic, payload: bytes("fine") });
            await tx.publish({ name: topic, payload: bytes("nowhere"), options: { partition: 5 } });
          }),
        );
        expect(answer.code).toBe("publish-refused");
        expect(answer.message).toContain("has 2 partitions");
        expect(await throughSentinel(connected, topic)).toEqual(["sentinel"]);
      } finally {
        await connected.shutdown();
      }
    });

    // Transactions are independent: one the cluster refused (a record over the topic's
    // max.message.bytes, which only the broker checks) must not fail the next one. librdkafka left
    // its idempotent sequence past the refused batch, so the next transaction met "skipped sequence
    // numbers" (code 45) and aborted too.
    it("a transaction after one the cluster refused commits; a reader sees only its records", async () => {
      const topic = uniqueName(`tx-after-refusal-${where}`);
      await refusingTopic(where, topic);
      const connected = await connect(
        where,
        brokerFor(where, {
          transactionalId: uniqueName(`tx-after-refusal-${where}`),
          maxMessageBytes: clientLimit,
        }),
      );
      try {
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        const answer = await refusal(() =>
          publisher.transaction(async (tx) => {
            await tx.publish({ name: topic, payload: bytes("refused-small") });
            await tx.publish({ name: topic, payload: tooLarge(where) });
          }),
        );
        expect(answer.code, answer.message).toBe("publish-refused");
        expect(answer.message).toMatch(/too large/i);
        const next = Array.from({ length: 6 }, (_, i) => `next-${i}`);
        await publisher.transaction(async (tx) => {
          for (const value of next) await tx.publish({ name: topic, payload: bytes(value) });
        });
        expect(await throughSentinel(connected, topic)).toEqual([...next, "sentinel"]);
      } finally {
        await connected.shutdown();
      }
    });
  });
}

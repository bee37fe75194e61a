import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type KafkaBroker, KafkaTopic, kafkaHeaders } from "../src/index.js";
import { brokerFor, connect, everywhere, type Where } from "./connections.js";

// Per-partition order holds for dead letters too: records of one partition that fail to decode
// reach the dead-letter topic in the order they had on it. They are on the topic before the app
// starts, so the subscription fetches them together and the runtime dead-letters them one right
// after another, without waiting for each publish: the producer must keep their order, whether the
// dead-letter topic exists already or is left to the cluster's automatic creation. On both engines
// and in-process.

const BAD = 20;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

/**
 * Publishes `BAD` payloads no JSON codec reads, all to `topic`'s one partition, and creates the
 * dead-letter topic first where `createDeadLetter` says.
 */
async function fill(
  where: Where,
  broker: KafkaBroker,
  topic: string,
  createDeadLetter: boolean,
): Promise<void> {
  const connected = await connect(where, broker);
  try {
    for (const name of createDeadLetter ? [topic, `${topic}.dlq`] : [topic]) {
      const created = await connected.subscribe(
        new KafkaTopic(name, { group: `g-${name}`, create: { partitions: 1 } }),
      );
      await created.close();
    }
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (let i = 0; i < BAD; i++) {
      await publisher.publish({ name: topic, payload: bytes(`bad-${i}`) });
    }
  } finally {
    await connected.shutdown();
  }
}

/** The dead letters' payloads and source offsets, in the order the dead-letter topic holds them. */
async function deadLetters(where: Where, broker: KafkaBroker, topic: string): Promise<string[]> {
  const connected = await connect(where, broker);
  try {
    const subscription = await connected.subscribe(
      new KafkaTopic(topic, { group: uniqueName("reader"), start: "earliest" }),
    );
    const out: string[] = [];
    while (out.length < BAD) {
      const next = await subscription.next();
      if (next.done) throw new Error(`${topic} ended after ${out.length} records`);
      next.value.ack();
      const offset = next.value.headers.getString(kafkaHeaders.deadLetterOffset);
      out.push(`${text(next.value.payload)}@${offset}`);
    }
    return out;
  } finally {
    await connected.shutdown();
  }
}

for (const where of everywhere) {
  describe(`${where}: dead letters`, () => {
    for (const createDeadLetter of [true, false]) {
      const dlq = createDeadLetter ? "an existing dead-letter topic" : "one the cluster creates";
      it(`keep their partition's order (${BAD} records that fail to decode, ${dlq})`, async () => {
        const broker = brokerFor(where);
        const topic = uniqueName(`dlq-order-${where}`);
        await fill(where, broker, topic, createDeadLetter);
        const app = new RustStream({ name: `dlq-order-${topic}`, version: "1.0.0" }).broker(
          broker,
          (b) => {
            b.subscriber(new KafkaTopic(topic, { commit: "tracked", start: "earliest" }))
              .deadLetter(`${topic}.dlq`)
              .handle(() => {
                throw new Error("no record here decodes, so no handler runs");
              });
          },
        );
        t =
          where === "in-process"
            ? await TestApp.start(app)
            : await TestApp.startLive(app, { withinMs: 30_000 });
        const deadline = Date.now() + 30_000;
        while (t.subscriber(topic).outcomes.length < BAD) {
          if (Date.now() > deadline) throw new Error(`outcomes: ${t.subscriber(topic).outcomes}`);
          await sleep(50);
        }
        await t.settle();
        expect(t.subscriber(topic).outcomes).toEqual(Array(BAD).fill("dead-letter"));
        await t.stop();
        t = undefined;
        expect(await deadLetters(where, broker, `${topic}.dlq`)).toEqual(
          Array.from({ length: BAD }, (_, i) => `bad-${i}@${i}`),
        );
      }, 90_000);
    }
  });
}

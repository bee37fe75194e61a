import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { CompressionTypes, Kafka, logLevel } from "kafkajs";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_INFLATED_BATCH_BYTES } from "../src/client/kafkajs/boundedGzip.js";
import { KafkaBroker, KafkaTopic, kafkaHeaders } from "../src/index.js";

// A gzip batch that inflates past the kafkajs engine's cap, between good ones, on the real node: a
// 70 MiB record of zeros, about 70 KB on the wire. kafkajs inflated it whole (any size: gzip reaches
// about 1000:1); now it is refused, its record handled as undecodable (dead-lettered here) and the
// subscription goes on past it, no fetch failing, the good records handled.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const bombBytes = 70 * 1024 * 1024;

describe("kafkajs: a gzip batch inflating past the cap", () => {
  it("is dead-lettered as undecodable, and the records after it are handled", async () => {
    expect(bombBytes).toBeGreaterThan(MAX_INFLATED_BATCH_BYTES);
    const topic = uniqueName("gzip-bomb");
    const handled: string[] = [];
    const app = new RustStream({ name: `bomb-${topic}`, version: "1.0.0" }).broker(
      new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine: "kafkajs" }),
      (b) => {
        b.subscriber(new KafkaTopic(topic, { commit: "tracked", start: "earliest" }))
          .deadLetter(`${topic}.dlq`)
          .handle((message) => {
            handled.push((message as { id: string }).id);
          });
      },
    );
    const producer = new Kafka({
      clientId: "bomb",
      brokers: requireEnv("KAFKA_BROKERS").split(","),
      logLevel: logLevel.NOTHING,
    }).producer();
    await producer.connect();
    try {
      // One batch each: a send is one request of one batch.
      for (const value of [
        Buffer.from(JSON.stringify({ id: "good 0" })),
        Buffer.alloc(bombBytes),
        Buffer.from(JSON.stringify({ id: "good 1" })),
      ]) {
        await producer.send({ topic, compression: CompressionTypes.GZIP, messages: [{ value }] });
      }
    } finally {
      await producer.disconnect();
    }
    t = await TestApp.startLive(app, { withinMs: 30_000 });
    const deadline = Date.now() + 30_000;
    while (handled.length < 2 || !t.subscriber(topic).outcomes.includes("dead-letter")) {
      if (Date.now() > deadline) {
        throw new Error(`handled ${handled}; outcomes ${t.subscriber(topic).outcomes}`);
      }
      await sleep(50);
    }
    expect(handled).toEqual(["good 0", "good 1"]);
    const connected = await new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS") }).connect();
    try {
      const dlq = await connected.subscribe(
        new KafkaTopic(`${topic}.dlq`, { group: uniqueName("reader"), start: "earliest" }),
      );
      const next = await dlq.next();
      if (next.done) throw new Error("the dead letter ended");
      const dead = next.value;
      expect(dead.headers.getString(kafkaHeaders.deadLetterOffset)).toBe("1");
      expect(text(dead.payload)).toBe("");
    } finally {
      await connected.shutdown();
    }
  }, 120_000);
});

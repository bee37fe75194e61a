import {
  headerNames,
  type Outcome,
  type ReadonlyHeaderMap,
  RustStream,
  retry,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { KafkaBroker, KafkaTopic, type KafkaTopicOptions, kafkaHeaders } from "../src/index.js";

// A message that always fails, through the app's runtime: exactly maxAttempts handler calls, then
// one dead-lettered copy carrying its origin under RustStream's Kafka names (topic, partition,
// offset) and core's reason, whichever way Kafka brought it back: a requeue served again by the
// member (tracked), a copy on the topic (auto, where a requeue is unsupported), or a delayed copy on
// the retry topic, which the subscription reads too. On both engines against the cluster, and in
// process on the test's clock.

const maxAttempts = 3;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

type Where = "librdkafka" | "kafkajs" | "in-process";

function app(where: Where, topic: string, options: KafkaTopicOptions, fail: () => Outcome) {
  const broker = new KafkaBroker({
    brokers: where === "in-process" ? "127.0.0.1:9092" : requireEnv("KAFKA_BROKERS"),
    ...(where === "in-process" ? {} : { engine: where }),
  });
  return new RustStream({ name: `poison-${topic}`, version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber(new KafkaTopic(topic, options))
      .maxAttempts(maxAttempts)
      .deadLetter(`${topic}.dlq`)
      .onFailure({ backoff: { initialMs: 20, maxMs: 50 } })
      .handle(fail);
  });
}

const throwing = (): Outcome => {
  throw new Error("always fails");
};

interface Record {
  readonly payload: string;
  readonly headers: ReadonlyHeaderMap;
}

/** The records of `topic` on the cluster, from its beginning, once `count` are there. */
async function read(topic: string, count: number): Promise<Record[]> {
  const connected = await new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS") }).connect();
  try {
    const subscription = await connected.subscribe(
      new KafkaTopic(topic, { group: uniqueName("reader"), start: "earliest" }),
    );
    const out: Record[] = [];
    while (out.length < count) {
      const next = await subscription.next();
      if (next.done) throw new Error(`${topic} ended after ${out.length} records`);
      out.push({ payload: text(next.value.payload), headers: next.value.headers });
    }
    return out;
  } finally {
    await connected.shutdown();
  }
}

/** What was published to `topic`: read back from the cluster, or from the in-process record. */
async function records(where: Where, topic: string, count: number): Promise<Record[]> {
  if (where !== "in-process") return read(topic, count);
  return t!.published(topic).map((m) => ({ payload: text(m.payload), headers: m.headers }));
}

async function start(where: Where, running: RustStream): Promise<TestApp> {
  return where === "in-process"
    ? TestApp.start(running)
    : TestApp.startLive(running, { withinMs: 30_000 });
}

/** Waits for the dead letter: live, through the reaction's quiet; in-process, on the test clock. */
async function untilDeadLettered(where: Where, topic: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!t!.subscriber(topic).outcomes.includes("dead-letter")) {
    if (Date.now() > deadline) throw new Error(`no dead letter: ${t!.subscriber(topic).outcomes}`);
    if (where === "in-process") await t!.advance(100);
    else await sleep(50);
  }
  await t!.settle();
}

function expectOrigin(
  headers: ReadonlyHeaderMap,
  origin: { topic: string; partition: string; offset: string },
): void {
  expect(headers.getString(kafkaHeaders.deadLetterTopic)).toBe(origin.topic);
  expect(headers.getString(kafkaHeaders.deadLetterPartition)).toBe(origin.partition);
  expect(headers.getString(kafkaHeaders.deadLetterOffset)).toBe(origin.offset);
  expect(headers.getString(kafkaHeaders.deadLetterReason)).toBe("max-attempts");
  expect(headers.getString("x-trace")).toBe("t-9");
}

for (const where of ["librdkafka", "kafkajs", "in-process"] as const) {
  describe(`${where}: a message that always fails`, () => {
    it("tracked, an immediate retry: the member serves it again, then the dead letter", async () => {
      const topic = uniqueName(`requeue-${where}`);
      t = await start(
        where,
        app(where, topic, { commit: "tracked" }, () => retry()),
      );
      await t.publish(topic, { id: "poison" }, { headers: { "x-trace": "t-9" } });
      await untilDeadLettered(where, topic);
      expect(t.subscriber(topic).attempts).toEqual([1, 2, 3]);
      expect(t.subscriber(topic).outcomes).toEqual(["retry", "retry", "dead-letter"]);
      const [dead, ...more] = await records(where, `${topic}.dlq`, 1);
      expect(more).toEqual([]);
      expect(JSON.parse(dead!.payload)).toEqual({ id: "poison" });
      // The first record on its topic, never copied, with its three deliveries counted.
      expectOrigin(dead!.headers, { topic, partition: "0", offset: "0" });
      expect(dead!.headers.getString(headerNames.retryCount)).toBe("3");
    }, 90_000);

    it("auto, an immediate retry: copies on the topic (a requeue is unsupported), then the dead letter", async () => {
      const topic = uniqueName(`copies-${where}`);
      t = await start(
        where,
        app(where, topic, { commit: "auto" }, () => retry()),
      );
      await t.publish(topic, { id: "poison" }, { headers: { "x-trace": "t-9" } });
      await untilDeadLettered(where, topic);
      expect(t.subscriber(topic).attempts).toEqual([1, 2, 3]);
      expect(t.subscriber(topic).outcomes).toEqual(["retry", "retry", "dead-letter"]);
      const onTopic = await records(where, topic, 3);
      expect(onTopic.map((r) => r.headers.getString(headerNames.retryCount))).toEqual([
        undefined,
        "1",
        "2",
      ]);
      const [dead] = await records(where, `${topic}.dlq`, 1);
      // The second copy, the topic's third record, with the three deliveries made.
      expectOrigin(dead!.headers, { topic, partition: "0", offset: "2" });
      expect(dead!.headers.getString(headerNames.retryCount)).toBe("3");
    }, 90_000);

    it("tracked with a retry topic, a thrown error: delayed copies there, then the dead letter", async () => {
      const topic = uniqueName(`retry-topic-${where}`);
      const retryTopic = `${topic}.retry`;
      t = await start(where, app(where, topic, { commit: "tracked", retryTopic }, throwing));
      await t.publish(topic, { id: "poison" }, { headers: { "x-trace": "t-9" } });
      await untilDeadLettered(where, topic);
      expect(t.subscriber(topic).attempts).toEqual([1, 2, 3]);
      expect(t.subscriber(topic).outcomes).toEqual(["retry-after", "retry-after", "dead-letter"]);
      const copies = await records(where, retryTopic, 2);
      expect(copies.map((r) => r.headers.getString(headerNames.retryCount))).toEqual(["1", "2"]);
      const [dead] = await records(where, `${topic}.dlq`, 1);
      // It last arrived as the retry topic's second record.
      expectOrigin(dead!.headers, { topic: retryTopic, partition: "0", offset: "1" });
      expect(dead!.headers.getString(headerNames.retryCount)).toBe("3");
    }, 90_000);
  });
}

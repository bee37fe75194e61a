// Entries a consumer cannot decode (issue 20): never acked away silently. Where the subscription
// declares a dead letter the entry goes there as it arrived, then is acked; without one it is acked
// with its validation error, as Pulsar's Java client does. Either way it is logged at error with
// its message id and the reason. The broker stores only entries whose checksum it verified, so the
// undecodable entries here are payloads their codec cannot read: compress() is swapped for one that
// writes bytes no ZSTD decoder accepts whenever the payload says "poison".
import { bytes as bytesCodec, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type ConnectedPulsarBroker,
  deadLetterTopic,
  PulsarBroker,
  PulsarShared,
} from "../src/index.js";
import { type MessageId, PulsarClient } from "../src/wire/index.js";
import { capture } from "./captureLog.js";
import { eventually, serviceUrl, topicStats } from "./env.js";

const garbage = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4);

vi.mock(import("../src/wire/compression.js"), async (importOriginal) => {
  const real = await importOriginal();
  return {
    ...real,
    compress: (type: number, data: Uint8Array): Uint8Array =>
      new TextDecoder().decode(data).includes("poison")
        ? Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4)
        : real.compress(type, data),
  };
});

let client: PulsarClient | undefined;
let broker: ConnectedPulsarBroker | undefined;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await broker?.shutdown();
  broker = undefined;
  await client?.close();
  client = undefined;
});

/** Sends each text as its own ZSTD entry; resolves to their ids. */
async function sendEach(topic: string, payloads: readonly string[]): Promise<MessageId[]> {
  client ??= new PulsarClient({ serviceUrl: serviceUrl() });
  const producer = await client.createProducer({ topic, compression: "ZSTD", batching: false });
  const ids: MessageId[] = [];
  for (const payload of payloads)
    ids.push(
      await producer.send({ payload: bytes(payload), key: "k", properties: { n: payload } }),
    );
  await producer.close();
  return ids;
}

const backlogOf = async (topic: string, subscription: string): Promise<number | undefined> =>
  (await topicStats(topic)).subscriptions[subscription]?.msgBacklog;

describe("an entry the consumer cannot decode", () => {
  it("goes, with a dead letter declared, to the dead letter as it arrived, logged at error with its id and reason", async () => {
    const topic = uniqueName("undecodable-dlq");
    const dlq = deadLetterTopic(topic, "s");
    const log = capture();
    broker = await new PulsarBroker({ url: serviceUrl(), logger: log.logger }).connect();
    const subscription = await broker.subscribe(
      new PulsarShared(topic, { subscription: "s" }).declareRetry({
        maxAttempts: 3,
        deadLetter: dlq,
      }),
    );
    const ids = await sendEach(topic, ["good 1", "poison", "good 2"]);
    const handed: string[] = [];
    for (let i = 0; i < 2; i++) {
      const next = await subscription.next();
      if (next.done) throw new Error("the subscription ended");
      handed.push(text(next.value.payload));
      await next.value.ack();
    }
    expect(handed).toEqual(["good 1", "good 2"]);

    client ??= new PulsarClient({ serviceUrl: serviceUrl() });
    const reader = await client.subscribe({
      topic: dlq,
      subscription: "s",
      subscriptionType: "Shared",
    });
    const dead = await reader.receive({ timeoutMs: 10_000 });
    reader.ack(dead);
    expect([...dead.payload]).toEqual([...garbage]);
    expect(dead.key).toBe("k");
    const poisonId = ids[1]!.toString();
    expect(Object.fromEntries(dead.properties)).toEqual({
      n: "poison",
      "x-ruststream-pulsar-compression": "ZSTD",
      "x-ruststream-pulsar-uncompressed-size": String(bytes("poison").length),
      "x-ruststream-dlq-source": topic,
      "x-ruststream-dlq-position": poisonId,
      "x-ruststream-dlq-reason": expect.stringMatching(
        /^undecodable entry \(DecompressionError\): /,
      ),
      REAL_TOPIC: `persistent://public/default/${topic}`,
      ORIGIN_MESSAGE_ID: poisonId,
    });
    expect(log.errors()).toEqual([
      {
        level: "error",
        fields: expect.objectContaining({
          topic: `persistent://public/default/${topic}`,
          subscription: "s",
          messageId: poisonId,
          reason: "DecompressionError",
          deadLetter: dlq,
        }),
        message: expect.stringContaining("moving it as it arrived to the dead letter"),
      },
    ]);
    // Acked once the dead letter has it: nothing is left for the subscription.
    await eventually(async () => (await backlogOf(topic, "s")) === 0, 10_000, "an empty backlog");
  });

  it("is acked without one, as Pulsar's Java client does, and logged at error with its id and reason", async () => {
    const topic = uniqueName("undecodable-drop");
    const log = capture();
    client = new PulsarClient({ serviceUrl: serviceUrl(), logger: log.logger });
    const consumer = await client.subscribe({
      topic,
      subscription: "s",
      subscriptionType: "Shared",
    });
    const ids = await sendEach(topic, ["good 1", "poison", "good 2"]);
    const handed: string[] = [];
    for (let i = 0; i < 2; i++) {
      const message = await consumer.receive({ timeoutMs: 10_000 });
      handed.push(text(message.payload));
      consumer.ack(message);
    }
    expect(handed).toEqual(["good 1", "good 2"]);
    expect(consumer.partitionConsumers[0]!.discarded).toBe(1);
    expect(log.errors()).toEqual([
      {
        level: "error",
        fields: expect.objectContaining({
          topic: `persistent://public/default/${topic}`,
          subscription: "s",
          messageId: ids[1]!.toString(),
          reason: "DecompressionError",
        }),
        message: expect.stringContaining("acked without delivering its messages"),
      },
    ]);
    await eventually(async () => (await backlogOf(topic, "s")) === 0, 10_000, "an empty backlog");
  });

  it("in an app: a whole batch goes to the subscriber's dead letter, logged through the app's logger", async () => {
    const topic = uniqueName("undecodable-app");
    const dlq = deadLetterTopic(topic, "billing");
    const log = capture();
    const handled: string[] = [];
    const app = new RustStream({ name: "billing", version: "1.0.0", logger: log.logger }).broker(
      new PulsarBroker({ url: serviceUrl() }),
      (b) => {
        b.subscriber(new PulsarShared(topic), { codec: bytesCodec })
          .maxAttempts(3)
          .deadLetter(dlq)
          .handle((payload: Uint8Array) => {
            handled.push(text(payload));
          });
      },
    );
    t = await TestApp.startLive(app);
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    // One batch of three with the poison inside: the whole entry is undecodable.
    const batched = await client.createProducer({
      topic,
      compression: "ZSTD",
      batching: { maxMessages: 3, maxDelayMs: 1000 },
    });
    const ids = await Promise.all(
      ["a", "poison", "b"].map((p) => batched.send({ payload: bytes(p) })),
    );
    await batched.close();
    await sendEach(topic, ["after"]);
    await eventually(() => handled.length === 1, 10_000, "the message after the batch handled");
    expect(handled).toEqual(["after"]);

    const reader = await client.subscribe({
      topic: dlq,
      subscription: "billing",
      subscriptionType: "Shared",
    });
    const dead = await reader.receive({ timeoutMs: 10_000 });
    reader.ack(dead);
    expect([...dead.payload]).toEqual([...garbage]);
    const entryId = `${ids[0]!.ledgerId}:${ids[0]!.entryId}:-1:-1`;
    expect(Object.fromEntries(dead.properties)).toMatchObject({
      "x-ruststream-pulsar-compression": "ZSTD",
      "x-ruststream-pulsar-batch-size": "3",
      ORIGIN_MESSAGE_ID: entryId,
    });
    expect(log.errors()).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({
          messageId: entryId,
          reason: "DecompressionError",
          messages: 3,
          deadLetter: dlq,
        }),
      }),
    ]);
  });

  it("stays on the subscription, redelivered, while the dead letter cannot be written", async () => {
    const topic = uniqueName("undecodable-stuck");
    const log = capture();
    broker = await new PulsarBroker({
      url: serviceUrl(),
      logger: log.logger,
      operationTimeoutMs: 1000,
    }).connect();
    // A namespace the broker does not have: the dead letter's producer is never created.
    const nowhere = "persistent://public/no-such-namespace/dlq";
    const subscription = await broker.subscribe(
      new PulsarShared(topic, { subscription: "s" }).declareRetry({
        maxAttempts: 3,
        deadLetter: nowhere,
      }),
    );
    await sendEach(topic, ["poison"]);
    await eventually(
      () => log.errors().some((l) => l.message.includes("failed: it is redelivered")),
      15_000,
      "a failed move logged",
    );
    await eventually(
      () => log.errors().filter((l) => l.message.includes("moving it as it arrived")).length >= 2,
      15_000,
      "the entry redelivered and tried again",
    );
    expect(await backlogOf(topic, "s")).toBe(1);
    await subscription.close();
  });
});

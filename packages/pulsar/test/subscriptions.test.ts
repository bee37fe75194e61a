// Produce and consume on each subscription type, against the real standalone broker.
import { isRustStreamError } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type Message, PulsarClient, PulsarServerError } from "../src/wire/index.js";
import { eventually, serviceUrl, topicStats } from "./env.js";
import { receiveOrNothing } from "./receiveOrNothing.js";
import { wireTopic } from "./wireTopic.js";

let client: PulsarClient;
afterEach(async () => {
  await client?.close();
});

async function receiveAll(
  consumer: { receive(o: { timeoutMs: number }): Promise<Message>; ack(m: Message): void },
  count: number,
): Promise<Message[]> {
  const out: Message[] = [];
  for (let i = 0; i < count; i++) {
    const message = await consumer.receive({ timeoutMs: 10_000 });
    consumer.ack(message);
    out.push(message);
  }
  return out;
}

describe.each(["Exclusive", "Shared", "Failover", "Key_Shared"] as const)("%s", (type) => {
  it("delivers every message in order with key, properties and times, and the acks clear the backlog", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const { topic, consumer, producer } = await wireTopic(client, `sub-${type}`, {
      consumer: { subscriptionType: type },
      producer: { batching: { keyBased: type === "Key_Shared" } },
    });
    const sent = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        producer.send({
          payload: bytes(`message ${i}`),
          key: `key-${i % 3}`,
          properties: { index: String(i) },
          eventTime: 1_000 + i,
        }),
      ),
    );
    const received = await receiveAll(consumer, 30);
    if (type === "Key_Shared") {
      // Key-based batches keep order per key, not across keys.
      for (const key of ["key-0", "key-1", "key-2"]) {
        const indexes = received
          .filter((m) => m.key === key)
          .map((m) => Number(m.properties.get("index")));
        expect(indexes).toEqual([...indexes].sort((x, y) => x - y));
      }
    }
    const got = [...received].sort(
      (x, y) => Number(x.properties.get("index")) - Number(y.properties.get("index")),
    );
    // One consumer sees one stream in publish order (per key on Key_Shared).
    if (type !== "Key_Shared") expect(received).toEqual(got);
    expect(got.map((m) => text(m.payload))).toEqual(sent.map((_, i) => `message ${i}`));
    expect(got[4]!.key).toBe("key-1");
    expect(got[4]!.properties.get("index")).toBe("4");
    expect(got[4]!.eventTime).toBe(1_004);
    expect(got[4]!.redeliveryCount).toBe(0);
    expect(got[4]!.topic).toBe(`persistent://public/default/${topic}`);
    expect(got.map((m) => m.messageId.toString())).toEqual(sent.map(String));

    const stats = await topicStats(topic);
    expect(stats.subscriptions.s!.type).toBe(type);
    await eventually(
      async () => (await topicStats(topic)).subscriptions.s!.msgBacklog === 0,
      10_000,
      "backlog 0",
    );
  });
});

describe("subscription rules", () => {
  it("refuses a second consumer on an Exclusive subscription with ConsumerBusy", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const topic = uniqueName("busy");
    await client.subscribe({ topic, subscription: "only", subscriptionType: "Exclusive" });
    const refused = await client
      .subscribe({ topic, subscription: "only", subscriptionType: "Exclusive" })
      .catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure")).toBe(true);
    const cause = (refused as Error).cause;
    expect(cause).toBeInstanceOf(PulsarServerError);
    expect((cause as PulsarServerError).serverError).toBe("ConsumerBusy");
  });

  it("Shared: two consumers split the messages, each delivered once", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const topic = uniqueName("shared2");
    const options = {
      topic,
      subscription: "s",
      subscriptionType: "Shared",
      receiverQueueSize: 10,
    } as const;
    const a = await client.subscribe(options);
    const b = await client.subscribe(options);
    const producer = await client.createProducer({ topic, batching: false });
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => producer.send({ payload: bytes(String(i)) })),
    );
    const seen: string[] = [];
    const counts = { a: 0, b: 0 };
    const drain = async (consumer: typeof a, name: "a" | "b") => {
      for (;;) {
        const m = await receiveOrNothing(consumer, 1500);
        if (!m) return;
        seen.push(text(m.payload));
        counts[name]++;
        consumer.ack(m);
      }
    };
    await Promise.all([drain(a, "a"), drain(b, "b")]);
    expect(seen.sort((x, y) => Number(x) - Number(y))).toEqual(
      Array.from({ length: 100 }, (_, i) => String(i)),
    );
    expect(counts.a).toBeGreaterThan(0);
    expect(counts.b).toBeGreaterThan(0);
  });

  it("Key_Shared: each key goes to one consumer only, in order", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const topic = uniqueName("keyshared2");
    const options = { topic, subscription: "s", subscriptionType: "Key_Shared" } as const;
    const a = await client.subscribe(options);
    const b = await client.subscribe(options);
    const producer = await client.createProducer({
      topic,
      batching: { keyBased: true, maxDelayMs: 5 },
    });
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        producer.send({ payload: bytes(String(i)), key: `k${i % 8}` }),
      ),
    );
    const byKey = new Map<string, Set<string>>();
    const order = new Map<string, number[]>();
    const drain = async (consumer: typeof a, name: string) => {
      for (;;) {
        const m = await receiveOrNothing(consumer, 1500);
        if (!m) return;
        byKey.set(m.key!, (byKey.get(m.key!) ?? new Set()).add(name));
        order.set(m.key!, [...(order.get(m.key!) ?? []), Number(text(m.payload))]);
        consumer.ack(m);
      }
    };
    await Promise.all([drain(a, "a"), drain(b, "b")]);
    expect(byKey.size).toBe(8);
    for (const consumers of byKey.values()) expect(consumers.size).toBe(1);
    for (const values of order.values()) expect(values).toEqual([...values].sort((x, y) => x - y));
    expect(new Set([...byKey.values()].flatMap((s) => [...s])).size).toBe(2);
  });

  it("Failover: only the active consumer receives; closing it moves delivery to the standby", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const topic = uniqueName("failover");
    const options = {
      topic,
      subscription: "s",
      subscriptionType: "Failover",
      initialPosition: "earliest",
    } as const;
    const first = await client.subscribe({ ...options, consumerName: "a" });
    const second = await client.subscribe({ ...options, consumerName: "b" });
    const producer = await client.createProducer({ topic, batching: false });
    await producer.send({ payload: bytes("one") });
    const [gotA, gotB] = await Promise.all([
      receiveOrNothing(first, 2000),
      receiveOrNothing(second, 2000),
    ]);
    expect([gotA, gotB].filter(Boolean)).toHaveLength(1);
    const active = gotA ? first : second;
    const standby = gotA ? second : first;
    const activeMessage = (gotA ?? gotB)!;
    expect(text(activeMessage.payload)).toBe("one");
    await active.close(); // unacked: the standby gets it again
    const moved = await standby.receive({ timeoutMs: 10_000 });
    expect(text(moved.payload)).toBe("one");
  });

  it("cumulative ack clears everything up to a message on Exclusive; refused on Shared", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const { topic, consumer, producer } = await wireTopic(client, "cumulative", {
      producer: { batching: { maxMessages: 4, maxDelayMs: 20 } },
    });
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => producer.send({ payload: bytes(String(i)) })),
    );
    let last: Message | undefined;
    for (let i = 0; i < 10; i++) last = await consumer.receive({ timeoutMs: 5000 });
    consumer.ackCumulative(last!);
    await eventually(
      async () => (await topicStats(topic)).subscriptions.s!.msgBacklog === 0,
      10_000,
      "backlog 0",
    );

    const shared = await client.subscribe({
      topic,
      subscription: "sh",
      subscriptionType: "Shared",
      initialPosition: "earliest",
    });
    const m = await shared.receive({ timeoutMs: 5000 });
    let thrown: unknown;
    try {
      shared.ackCumulative(m);
    } catch (error) {
      thrown = error;
    }
    expect(isRustStreamError(thrown, "invalid-argument")).toBe(true);
  });
});

describe("whose message", () => {
  it("a consumer acks only what it received: another consumer's message, or anything else, is refused with foreign-value", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const topic = uniqueName("foreign");
    const [a, b] = await Promise.all(
      ["a", "b"].map((subscription) =>
        client.subscribe({ topic, subscription, initialPosition: "earliest" }),
      ),
    );
    const producer = await client.createProducer({ topic });
    const sentId = await producer.send({ payload: bytes("one") });
    const fromA = await a!.receive({ timeoutMs: 10_000 });
    const fromB = await b!.receive({ timeoutMs: 10_000 });
    const refusal = (f: () => void): string | undefined => {
      try {
        f();
        return undefined;
      } catch (error) {
        return isRustStreamError(error) ? error.code : String(error);
      }
    };
    expect(refusal(() => b!.ack(fromA))).toBe("foreign-value");
    expect(refusal(() => a!.nack(fromB))).toBe("foreign-value");
    const lookalike = { ...fromA, messageId: fromA.messageId } as unknown as Message;
    expect(refusal(() => a!.ack(lookalike))).toBe("foreign-value");
    // Its own: acked, and its id is the one the producer's receipt named.
    expect(refusal(() => a!.ack(fromA))).toBeUndefined();
    expect(fromA.messageId.equals(sentId)).toBe(true);
    expect(fromA.partition).toBe(-1);
  });
});

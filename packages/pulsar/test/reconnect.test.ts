// A broker-initiated close (topic unload through the admin API: CLOSE_PRODUCER and CLOSE_CONSUMER)
// in the middle of a stream: the producer looks the topic up again, recreates itself and resends
// what was pending in order; the consumer resubscribes and keeps receiving.

import { bytes, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PulsarClient } from "../src/wire/index.js";
import { serviceUrl, unloadTopic } from "./env.js";
import { wireTopic } from "./wireTopic.js";

let client: PulsarClient;
afterEach(async () => {
  await client?.close();
});

describe("topic unload mid-stream", () => {
  it.each([
    ["unbatched", false],
    ["batched", true],
  ] as const)("%s: every send is confirmed, and the consumer sees every message, first copies in order", async (_n, batching) => {
    client = new PulsarClient({ serviceUrl: serviceUrl(), backoff: { initialMs: 50, maxMs: 500 } });
    const { topic, consumer, producer } = await wireTopic(client, "unload", {
      producer: { batching: batching ? { maxMessages: 20 } : false },
    });
    const total = 3000;
    const sends: Promise<unknown>[] = [];
    let unloaded: Promise<void> | undefined;
    for (let i = 0; i < total; i++) {
      sends.push(producer.send({ payload: bytes(String(i)) }));
      if (i === 1000) unloaded = unloadTopic(topic);
      if (i % 100 === 0) await sleep(1);
    }
    await unloaded;
    await Promise.all(sends);
    expect(producer.partitionProducers[0]!.connects).toBeGreaterThanOrEqual(2);

    // Without deduplication a resend of an entry the broker had stored arrives twice; the first
    // copies must still be in order and none missing.
    const firstSeen: number[] = [];
    const seen = new Set<number>();
    while (seen.size < total) {
      const m = await consumer.receive({ timeoutMs: 15_000 });
      const n = Number(text(m.payload));
      if (!seen.has(n)) {
        seen.add(n);
        firstSeen.push(n);
      }
      consumer.ack(m);
    }
    expect(firstSeen).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(consumer.partitionConsumers[0]!.connects).toBeGreaterThanOrEqual(2);
  });

  it("a consumer waiting for messages resubscribes and receives what is sent after the unload", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl(), backoff: { initialMs: 50, maxMs: 500 } });
    const topic = uniqueName("unload-consumer");
    const consumer = await client.subscribe({ topic, subscription: "s" });
    const waiting = consumer.receive({ timeoutMs: 20_000 });
    await unloadTopic(topic);
    const producer = await client.createProducer({ topic, batching: false });
    await producer.send({ payload: bytes("after unload") });
    expect(text((await waiting).payload)).toBe("after unload");
  });
});

// Partitioned topics (created through the admin API): keyed messages land on the partition the Java
// client's hash picks, unkeyed ones spread, and one consumer reads every partition.

import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type HashingScheme, PulsarClient } from "../src/wire/index.js";
import { partitionForKey } from "../src/wire/murmur3.js";
import { createPartitionedTopic, serviceUrl } from "./env.js";

let client: PulsarClient;
afterEach(async () => {
  await client?.close();
});

describe.each([
  "JavaStringHash",
  "Murmur3_32Hash",
] as const)("keys hashed with %s", (scheme: HashingScheme) => {
  it("go to the partition the scheme picks, and come back from it in order", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const topic = uniqueName("partitioned");
    await createPartitionedTopic(topic, 4);
    const consumer = await client.subscribe({
      topic,
      subscription: "s",
      initialPosition: "earliest",
    });
    expect(consumer.partitions).toBe(4);
    const producer = await client.createProducer({
      topic,
      hashingScheme: scheme,
      batching: { maxDelayMs: 5 },
    });
    expect(producer.partitions).toBe(4);
    const keys = Array.from({ length: 12 }, (_, i) => `customer-${i}`);
    const sends = [];
    for (let round = 0; round < 5; round++)
      for (const key of keys) sends.push(producer.send({ payload: bytes(`${key}/${round}`), key }));
    const ids = await Promise.all(sends);
    ids.forEach((id, i) => {
      expect(id.partition).toBe(partitionForKey(keys[i % keys.length]!, 4, scheme));
    });
    expect(new Set(ids.map((id) => id.partition)).size).toBeGreaterThan(1);

    const rounds = new Map<string, number[]>();
    for (let i = 0; i < sends.length; i++) {
      const m = await consumer.receive({ timeoutMs: 10_000 });
      const [key, round] = text(m.payload).split("/") as [string, string];
      expect(m.key).toBe(key);
      expect(m.partition).toBe(partitionForKey(key, 4, scheme));
      expect(m.topic).toBe(`persistent://public/default/${topic}-partition-${m.partition}`);
      rounds.set(key, [...(rounds.get(key) ?? []), Number(round)]);
      consumer.ack(m);
    }
    for (const seen of rounds.values()) expect(seen).toEqual([0, 1, 2, 3, 4]);
  });
});

describe("partitioned topics", () => {
  it("spread unkeyed messages over the partitions, and an explicit partition wins", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const topic = uniqueName("spread");
    await createPartitionedTopic(topic, 3);
    const producer = await client.createProducer({ topic, batching: false });
    const ids = await Promise.all(
      Array.from({ length: 30 }, () => producer.send({ payload: bytes("x") })),
    );
    expect(new Set(ids.map((id) => id.partition))).toEqual(new Set([0, 1, 2]));
    const pinned = await producer.send({ payload: bytes("y"), key: "any", partition: 2 });
    expect(pinned.partition).toBe(2);
  });
});

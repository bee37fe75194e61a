import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedKafkaBroker,
  KafkaBroker,
  KafkaPosition,
  KafkaPublish,
  KafkaTopic,
  murmur2,
  type Partitioner,
  toPositive,
} from "../src/index.js";

// The same key lands on the same partition whichever client wrote it. By default both engines and
// the stand-in place keys as the Java client does (murmur2), checked against the Java client's own
// code (kafka-clients, run by java); with partitioner "consistent-random" they place them as
// librdkafka's default partitioner does, checked against a raw librdkafka producer left at its
// defaults.

const PARTITIONS = 6;
const fixture = fileURLToPath(new URL("./fixtures/JavaPartitioner.java", import.meta.url));

// Short and long keys, every tail length of murmur2's 4-byte blocks, non-ASCII and binary bytes.
const keys: Uint8Array[] = [
  ...Array.from({ length: 40 }, (_, i) => bytes(`key-${i}-${"x".repeat(i % 9)}`)),
  bytes("ü-naïve-ключ"),
  new Uint8Array([0, 255, 128, 7, 13, 10]),
  new Uint8Array([0xff, 0xff, 0xff]),
];

function hex(key: Uint8Array): string {
  return Buffer.from(key).toString("hex");
}

/** What the Java client computes for each key. */
function javaPartitions(count: number, of: readonly Uint8Array[]): number[] {
  const out = execFileSync(
    requireEnv("KAFKA_JAVA"),
    ["-cp", `${requireEnv("KAFKA_LIBS")}/*`, fixture, String(count), ...of.map(hex)],
    { encoding: "utf8", timeout: 60_000 },
  );
  return out.trim().split("\n").map(Number);
}

/** Publishes every key through the broker's connection and answers the partition of each. */
async function placed(
  connected: ConnectedKafkaBroker,
  topic: string,
  partitioner: Partitioner | undefined,
): Promise<number[]> {
  // Subscribing creates the topic with its partitions.
  const subscription = await connected.subscribe(
    new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: PARTITIONS } }),
  );
  await subscription.close();
  const publisher = await new KafkaPublish(partitioner === undefined ? {} : { partitioner }).pair(
    connected,
  );
  const out: number[] = [];
  for (const key of keys) {
    const receipt = await publisher.publish({
      name: topic,
      payload: bytes("v"),
      partitionKey: key,
    });
    const target = KafkaPosition.parse(receipt.position ?? "").target;
    if (target.kind !== "offset")
      throw new Error(`a receipt without an offset: ${receipt.position}`);
    out.push(target.partition);
  }
  return out;
}

async function live(engine: "librdkafka" | "kafkajs", partitioner?: Partitioner) {
  const connected = await new KafkaBroker({
    brokers: requireEnv("KAFKA_BROKERS"),
    engine,
  }).connect();
  try {
    return await placed(connected, uniqueName(`keys-${engine}`), partitioner);
  } finally {
    await connected.shutdown();
  }
}

async function inProcess(partitioner?: Partitioner) {
  const connected = await new KafkaBroker({ brokers: "127.0.0.1:9092" }).connectInProcess({
    coordinator: new CountingCoordinator(),
    clock: systemClock,
  });
  try {
    return await placed(connected, uniqueName("keys-in-process"), partitioner);
  } finally {
    await connected.shutdown();
  }
}

interface RawProducer {
  connect(options: object, cb: (error: Error | null) => void): void;
  setPollInBackground(set: boolean): void;
  produce(
    topic: string,
    partition: null,
    value: Buffer,
    key: Buffer,
    ts: null,
    opaque: number,
  ): void;
  on(
    event: "delivery-report",
    listener: (error: Error | null, report: { opaque: number; partition: number }) => void,
  ): void;
  disconnect(cb: () => void): void;
}

/** librdkafka's own default partitioner (`consistent_random`): a raw producer at its defaults. */
async function librdkafkaDefault(topic: string): Promise<number[]> {
  const require = createRequire(import.meta.url);
  const client = require("@confluentinc/kafka-javascript") as {
    Producer: new (config: object) => RawProducer;
  };
  const producer = new client.Producer({
    "metadata.broker.list": requireEnv("KAFKA_BROKERS"),
    dr_cb: true,
  });
  await new Promise<void>((resolve, reject) =>
    producer.connect({}, (error) => (error ? reject(error) : resolve())),
  );
  producer.setPollInBackground(true);
  const partitions = new Map<number, number>();
  const done = new Promise<void>((resolve, reject) => {
    producer.on("delivery-report", (error, report) => {
      if (error) reject(error);
      partitions.set(report.opaque, report.partition);
      if (partitions.size === keys.length) resolve();
    });
  });
  for (const [i, key] of keys.entries()) {
    producer.produce(topic, null, Buffer.from("v"), Buffer.from(key), null, i);
  }
  await done;
  await new Promise<void>((resolve) => producer.disconnect(() => resolve()));
  return keys.map((_, i) => partitions.get(i)!);
}

describe("key to partition", () => {
  it("murmur2 (the default) is the Java client's: both engines and in-process", async () => {
    const java = javaPartitions(PARTITIONS, keys);
    // Keys spread, or the comparison proves little.
    expect(new Set(java).size).toBeGreaterThan(3);
    expect(await live("librdkafka"), "librdkafka").toEqual(java);
    expect(await live("kafkajs"), "kafkajs").toEqual(java);
    expect(await inProcess(), "in-process").toEqual(java);
  }, 120_000);

  it("the murmur2 function itself matches the Java client's over many keys and counts", () => {
    const many = Array.from({ length: 300 }, (_, i) =>
      Uint8Array.from({ length: i % 23 }, (_, j) => (i * 31 + j * 17) & 0xff),
    );
    for (const count of [1, 7, 64]) {
      const java = javaPartitions(count, many);
      expect(many.map((k) => toPositive(murmur2(k)) % count)).toEqual(java);
    }
  }, 120_000);

  it('"consistent-random" is librdkafka\'s default partitioner: both engines and in-process', async () => {
    const connected = await new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS") }).connect();
    const topic = uniqueName("keys-librdkafka-default");
    try {
      const created = await connected.subscribe(
        new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: PARTITIONS } }),
      );
      await created.close();
    } finally {
      await connected.shutdown();
    }
    const reference = await librdkafkaDefault(topic);
    expect(new Set(reference).size).toBeGreaterThan(3);
    expect(await live("librdkafka", "consistent-random"), "librdkafka").toEqual(reference);
    expect(await live("kafkajs", "consistent-random"), "kafkajs").toEqual(reference);
    expect(await inProcess("consistent-random"), "in-process").toEqual(reference);
    // And the two partitioners really differ, so each comparison tells them apart.
    expect(reference).not.toEqual(javaPartitions(PARTITIONS, keys));
  }, 120_000);
});

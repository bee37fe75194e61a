import { randomUUID } from "node:crypto";
import { type Consumer, Kafka, logLevel, Partitioners, type Producer } from "kafkajs";
import { afterAll, describe, expect, it } from "vitest";
import { requireEnv } from "../src/requireEnv.mjs";

function brokers(): string[] {
  return requireEnv("KAFKA_BROKERS").split(",");
}

const run = randomUUID().slice(0, 8);
let kafka: Kafka | undefined;
const producers: Producer[] = [];
const consumers: Consumer[] = [];
const topics: string[] = [];

// Made inside each test, not in beforeAll: a failing beforeAll reports the tests as skipped.
function client(): Kafka {
  kafka ??= new Kafka({
    clientId: `brokers-smoke-${run}`,
    brokers: brokers(),
    // kafkajs logs every retriable error, and the first group join and the first transaction on a
    // fresh broker always retry while __consumer_offsets / __transaction_state are created. Real
    // failures still surface as rejections and timeouts below.
    logLevel: logLevel.NOTHING,
    retry: { retries: 5 },
  });
  return kafka;
}

afterAll(async () => {
  await Promise.allSettled([...consumers, ...producers].map((c) => c.disconnect()));
  // Unique topics per run would pile up in the shared broker and slow its later starts.
  if (kafka && topics.length > 0) {
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics }).catch(() => {});
    await admin.disconnect();
  }
});

async function newTopic(label: string): Promise<string> {
  const topic = `smoke-${label}-${run}`;
  const admin = client().admin();
  await admin.connect();
  try {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
      waitForLeaders: false,
    });
    expect(created).toBe(true);
    // kafkajs's own wait for leaders gives up on "This server does not host this topic-partition",
    // which a freshly started broker answers until its metadata has caught up with the new topic:
    // wait here instead, taking that answer as "not yet".
    const deadline = Date.now() + 30_000;
    for (;;) {
      const led = await admin
        .fetchTopicMetadata({ topics: [topic] })
        .then((m) => m.topics[0]?.partitions.every((p) => p.leader >= 0) ?? false)
        .catch(() => false);
      if (led) break;
      if (Date.now() > deadline) throw new Error(`topic ${topic} has no leader after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await admin.disconnect();
  }
  topics.push(topic);
  return topic;
}

function producer(options: Parameters<Kafka["producer"]>[0] = {}): Producer {
  const p = client().producer({ createPartitioner: Partitioners.DefaultPartitioner, ...options });
  producers.push(p);
  return p;
}

/** Reads `topic` from the beginning in a fresh group until `count` values arrived. */
async function consume(topic: string, count: number, readUncommitted = false): Promise<string[]> {
  const consumer = client().consumer({ groupId: `smoke-${randomUUID()}`, readUncommitted });
  consumers.push(consumer);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`consumed ${JSON.stringify(values)} from ${topic}, expected ${count} values`),
        ),
      30_000,
    );
    consumer
      .run({
        eachMessage: async ({ message }) => {
          values.push(message.value?.toString() ?? "<null>");
          if (values.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return values;
}

describe("kafka smoke", () => {
  it("produces to a new topic and consumes exactly what was sent", async () => {
    const topic = await newTopic("plain");
    const p = producer();
    await p.connect();
    const sent = ["one", "two", "three"].map((v) => `${v}-${run}`);
    await p.send({ topic, messages: sent.map((value, i) => ({ key: `k${i}`, value })) });

    expect(await consume(topic, sent.length)).toEqual(sent);
  });

  it("commits a transaction and hides an aborted one from read_committed consumers", async () => {
    const topic = await newTopic("txn");
    const p = producer({
      transactionalId: `smoke-txn-${run}`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await p.connect();

    const aborted = await p.transaction();
    await aborted.send({ topic, messages: [{ value: `aborted-${run}` }] });
    await aborted.abort();

    const committed = await p.transaction();
    await committed.send({ topic, messages: [{ value: `committed-${run}` }] });
    await committed.commit();

    // Control markers take offsets too; what matters is which records each isolation level returns.
    // The committed record follows the aborted one, so once it arrives the aborted one was skipped.
    expect(await consume(topic, 1)).toEqual([`committed-${run}`]);
    // ...and the aborted record did reach the log: read_uncommitted sees both.
    expect(await consume(topic, 2, true)).toEqual([`aborted-${run}`, `committed-${run}`]);
  });
});

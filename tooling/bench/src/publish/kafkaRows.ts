// Kafka, on each engine: the app's publish against that engine's raw client at the same
// concurrency, every row producing the same records (the payload, the partition key as the record
// key, the content type as a header) to a fresh 4-partition topic, each record's confirmation awaited.
//
//   raw librdkafka        Producer.produce with delivery reports (the package's producer settings:
//                         dr_cb, consistent_random), `depth` unreported at a time
//   raw kafkajs send      producer.send of one record, `depth` requests outstanding
//   raw kafkajs batch     producer.send of `depth` records, awaited, then the next `depth`
//   app.publish           a running RustStream app on KafkaBroker with that engine, bytes codec
import rdkafka from "@confluentinc/kafka-javascript";
import { bytes, RustStream } from "@ruststream/core";
import { KafkaBroker, type KafkaEngineName } from "@ruststream/kafka";
import kafkajs from "kafkajs";
import { bytesContentType, keyOf, payloadOf } from "./message.js";
import { expectStored, type PublishRow } from "./row.js";
import { batched, type Timed, windowed } from "./window.js";

const partitions = 4;
let topics = 0;
const freshTopic = () => `bench-publish-${process.pid}-${topics++}`;
const headers = { "content-type": Buffer.from(bytesContentType) };

/** Runs `publish` onto a fresh topic, checks the partitions' ends add up to `count`, deletes it. */
async function onFreshTopic(
  brokers: string,
  row: string,
  count: number,
  publish: (topic: string) => Promise<Timed>,
): Promise<Timed> {
  const admin = new kafkajs.Kafka({
    clientId: "bench-publish-admin",
    brokers: brokers.split(","),
    logLevel: kafkajs.logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const topic = freshTopic();
    await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
      waitForLeaders: true,
    });
    const timed = await publish(topic);
    const ends = await admin.fetchTopicOffsets(topic);
    expectStored(
      row,
      topic,
      ends.reduce((sum, end) => sum + Number(end.high), 0),
      count,
    );
    await admin.deleteTopics({ topics: [topic] });
    return timed;
  } finally {
    await admin.disconnect();
  }
}

interface Report {
  readonly opaque: number;
}

/** The raw librdkafka producer, its delivery reports settling the sends by opaque. */
async function rdkafkaRow(brokers: string, topic: string, count: number, depth: number) {
  const producer = new rdkafka.Producer({
    "metadata.broker.list": brokers,
    "client.id": "bench-publish-raw",
    partitioner: "consistent_random",
    dr_cb: true,
  });
  await new Promise<void>((resolve, reject) =>
    producer.connect({}, (error) => (error ? reject(error) : resolve())),
  );
  producer.setPollInBackground(true);
  const waiting = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  producer.on("delivery-report", (error, report) => {
    const id = (report as unknown as Report).opaque;
    const w = waiting.get(id);
    waiting.delete(id);
    if (error) w?.reject(error);
    else w?.resolve();
  });
  try {
    return await windowed(
      count,
      depth,
      (i) =>
        new Promise<void>((resolve, reject) => {
          waiting.set(i, { resolve, reject });
          producer.produce(topic, -1, payloadOf(i), Buffer.from(keyOf(i)), null, i, [headers]);
        }),
    );
  } finally {
    await new Promise((resolve) => producer.disconnect(resolve));
  }
}

async function kafkajsProducer(brokers: string) {
  const producer = new kafkajs.Kafka({
    clientId: "bench-publish-raw",
    brokers: brokers.split(","),
    logLevel: kafkajs.logLevel.NOTHING,
  }).producer();
  await producer.connect();
  return producer;
}

const record = (i: number) => ({ key: keyOf(i), value: payloadOf(i), headers });

function appRow(name: string, brokers: string, engine: KafkaEngineName, table: string): PublishRow {
  return {
    name,
    broker: table,
    baseline: false,
    run: (count, depth) =>
      onFreshTopic(brokers, name, count, async (topic) => {
        const app = new RustStream({ name: "bench-publish", version: "0" }).broker(
          new KafkaBroker({ brokers, engine }),
          () => {},
        );
        const running = await app.start();
        try {
          return await windowed(count, depth, (i) =>
            running.publish(topic, payloadOf(i), { codec: bytes, partitionKey: keyOf(i) }),
          );
        } finally {
          await running.stop();
        }
      }),
  };
}

export function rdkafkaRows(brokers: string): PublishRow[] {
  const table = "Kafka (librdkafka)";
  return [
    {
      name: "raw librdkafka",
      broker: table,
      baseline: true,
      run: (count, depth) =>
        onFreshTopic(brokers, "raw librdkafka", count, (topic) =>
          rdkafkaRow(brokers, topic, count, depth),
        ),
    },
    appRow("app.publish", brokers, "librdkafka", table),
  ];
}

export function kafkajsRows(brokers: string): PublishRow[] {
  const table = "Kafka (kafkajs)";
  const raw = (
    name: string,
    publish: (
      producer: kafkajs.Producer,
      topic: string,
      count: number,
      depth: number,
    ) => Promise<Timed>,
  ): PublishRow => ({
    name,
    broker: table,
    baseline: true,
    run: (count, depth) =>
      onFreshTopic(brokers, name, count, async (topic) => {
        const producer = await kafkajsProducer(brokers);
        try {
          return await publish(producer, topic, count, depth);
        } finally {
          await producer.disconnect();
        }
      }),
  });
  return [
    raw("raw kafkajs send", (producer, topic, count, depth) =>
      windowed(count, depth, (i) => producer.send({ topic, messages: [record(i)] })),
    ),
    raw("raw kafkajs batch", (producer, topic, count, depth) =>
      batched(count, depth, async (from, to) => {
        const messages = [];
        for (let i = from; i < to; i++) messages.push(record(i));
        await producer.send({ topic, messages });
      }),
    ),
    appRow("app.publish", brokers, "kafkajs", table),
  ];
}

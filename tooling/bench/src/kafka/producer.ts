// The producer, in its own process so its CPU is never the measured consumer's: before each row it
// creates a fresh topic and fills it with JSON orders (librdkafka's producer, batched); after the
// row it reports how far the row's group committed and deletes the topic and the group.
//
//   forked by producerProcess.ts with the bootstrap servers as its argument; speaks protocol.ts.
import rdkafka from "@confluentinc/kafka-javascript";
import kafkajs from "kafkajs";
import { orderPayload } from "../redis/drain/order.js";
import type { ProducerCommand, ProducerReply } from "./protocol.js";

const brokers = process.argv[2];
if (brokers === undefined)
  throw new Error("producer: pass the bootstrap servers as the first argument");

const reply = (message: ProducerReply) => process.send?.(message);

const admin = new kafkajs.Kafka({
  clientId: "bench-producer-admin",
  brokers: brokers.split(","),
  logLevel: kafkajs.logLevel.NOTHING,
}).admin();
await admin.connect();

const producer = new rdkafka.Producer({
  "metadata.broker.list": brokers,
  "client.id": "bench-producer",
  "linger.ms": 5,
  "batch.size": 1_000_000,
  // Room for a whole row in the client's queue, so a fill rarely waits on it.
  "queue.buffering.max.messages": 2_000_000,
  "queue.buffering.max.kbytes": 2_000_000,
});
await new Promise<void>((resolve, reject) =>
  producer.connect({}, (error) => (error ? reject(error) : resolve())),
);
producer.setPollInBackground(true);

const flush = () =>
  new Promise<void>((resolve, reject) =>
    producer.flush(60_000, (error) => (error ? reject(error) : resolve())),
  );

/**
 * An admin call again while the cluster answers with a retriable error: on a loaded machine a topic
 * just created or deleted is sometimes not in the broker's metadata yet ("This server does not host
 * this topic-partition") after kafkajs's own retries.
 */
async function retried<T>(what: string, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if ((error as { retriable?: boolean }).retriable !== true || attempt === 10) {
        throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

const QUEUE_FULL = rdkafka.CODES.ERRORS.ERR__QUEUE_FULL;

async function fill(topic: string, partitions: number, count: number): Promise<void> {
  await retried(`creating ${topic}`, () =>
    admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
      waitForLeaders: true,
    }),
  );
  for (let i = 0; i < count; i++) {
    const value = orderPayload(i);
    for (;;) {
      try {
        producer.produce(topic, i % partitions, value, null, null);
        break;
      } catch (error) {
        // The client's queue is full: let it drain, then go on.
        if ((error as { code?: number }).code !== QUEUE_FULL) throw error;
        await flush();
      }
    }
  }
  await flush();
}

async function finish(topic: string, group: string): Promise<ProducerReply> {
  const [committed] = await retried(`the offsets ${group} committed`, () =>
    admin.fetchOffsets({ groupId: group, topics: [topic] }),
  );
  const ends = await retried(`the ends of ${topic}`, () => admin.fetchTopicOffsets(topic));
  let lag = 0;
  const parts: string[] = [];
  for (const end of ends) {
    const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? "-1";
    lag += Number(end.high) - Math.max(0, Number(at));
    parts.push(`${end.partition}: ${at}/${end.high}`);
  }
  await retried(`deleting ${topic}`, () => admin.deleteTopics({ topics: [topic] }));
  await admin.deleteGroups([group]).catch(() => undefined);
  return { kind: "finished", lag, partitions: parts.join(", ") };
}

process.on("message", (command: ProducerCommand) => {
  const work = async (): Promise<ProducerReply> => {
    switch (command.kind) {
      case "fill": {
        const began = performance.now();
        await fill(command.topic, command.partitions, command.count);
        return { kind: "filled", ms: performance.now() - began };
      }
      case "finish":
        return finish(command.topic, command.group);
      case "exit":
        await admin.disconnect();
        await new Promise((resolve) => producer.disconnect(resolve));
        process.exit(0);
    }
  };
  work().then(reply, (error: unknown) =>
    reply({ kind: "failed", message: error instanceof Error ? error.message : String(error) }),
  );
});
reply({ kind: "ready" });

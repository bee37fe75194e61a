import { bytes, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import { expect, it } from "vitest";
import { KafkajsProducer } from "../src/client/kafkajs/producer.js";
import type { DeliveryReport, ProducedRecord } from "../src/client/link.js";

// The kafkajs engine's producer on the cluster, counted by kafkajs's own request events: the sends
// made in one tick (a window of publishes, the replies of a batch of handlers) leave as one produce
// request, and what is sent while it is in flight goes as the next one, in order. Before, the
// tick's first send went alone and the others waited a round trip behind it.

const record = (topic: string, i: number): ProducedRecord => ({
  topic,
  partition: 0,
  key: undefined,
  value: bytes(`r-${i}`),
  headers: [],
});

it("sends of one tick go as one produce request, and those sent while it is out as the next", async () => {
  const kafka = new Kafka({
    clientId: "kafkajs-produce-requests",
    brokers: [requireEnv("KAFKA_BROKERS")],
    logLevel: logLevel.NOTHING,
  });
  const topic = uniqueName("kafkajs-requests");
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const client = kafka.producer();
  let requests = 0;
  client.on(client.events.REQUEST, (event) => {
    if (event.payload.apiName === "Produce") requests++;
  });
  await client.connect();
  const producer = new KafkajsProducer(client, undefined);
  try {
    const together = await Promise.all(
      Array.from({ length: 40 }, (_, i) => producer.send(record(topic, i))),
    );
    expect(requests).toBe(1);
    const first = Array.from({ length: 20 }, (_, i) => producer.send(record(topic, 40 + i)));
    // Sent from a later tick, while the first request is out: they wait for it and go together.
    const second = await new Promise<Promise<DeliveryReport>[]>((resolve) =>
      setImmediate(() =>
        resolve(Array.from({ length: 20 }, (_, i) => producer.send(record(topic, 60 + i)))),
      ),
    );
    const reports = [...together, ...(await Promise.all([...first, ...second]))];
    expect(reports).toEqual(reports.map((_, i) => ({ partition: 0, offset: BigInt(i) })));
    expect(requests).toBe(3);
  } finally {
    await producer.close();
    const cleanup = kafka.admin();
    await cleanup.connect();
    await cleanup.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await cleanup.disconnect();
  }
}, 60_000);

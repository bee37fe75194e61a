// Pulsar: the app's publish against our own wire client (@ruststream/pulsar/wire), which is the
// raw client here as in the Pulsar bench (it holds its own against the Java client there). Both
// send the same messages (the payload, the partition key as the message key, the content type as
// a property) to a fresh topic with the producer settings PulsarBroker gives its producers
// (key-based batching, the wire client's batch defaults), each send's receipt awaited.
import { bytes, RustStream } from "@ruststream/core";
import { PulsarBroker } from "@ruststream/pulsar";
import { PulsarClient } from "@ruststream/pulsar/wire";
import { createTopic, deleteTopic, topicStats } from "../pulsar/admin.js";
import { bytesContentType, keyOf, payloadOf } from "./message.js";
import { expectStored, type PublishRow } from "./row.js";
import { type Timed, windowed } from "./window.js";

const table = "Pulsar";
let topics = 0;
const freshTopic = () => `bench-publish-${process.pid}-${topics++}`;
const properties = new Map([["content-type", bytesContentType]]);

async function onFreshTopic(
  row: string,
  count: number,
  publish: (topic: string) => Promise<Timed>,
): Promise<Timed> {
  const topic = freshTopic();
  await createTopic(topic);
  const timed = await publish(topic);
  expectStored(row, topic, (await topicStats(topic)).msgInCounter, count);
  await deleteTopic(topic);
  return timed;
}

export function pulsarRows(url: string): PublishRow[] {
  return [
    {
      name: "raw wire client",
      broker: table,
      baseline: true,
      run: (count, depth) =>
        onFreshTopic("raw wire client", count, async (topic) => {
          const client = new PulsarClient({ serviceUrl: url });
          try {
            const producer = await client.createProducer({ topic, batching: { keyBased: true } });
            const timed = await windowed(count, depth, (i) =>
              producer.send({ payload: payloadOf(i), key: keyOf(i), properties }),
            );
            await producer.close();
            return timed;
          } finally {
            await client.close();
          }
        }),
    },
    {
      name: "app.publish",
      broker: table,
      baseline: false,
      run: (count, depth) =>
        onFreshTopic("app.publish", count, async (topic) => {
          const app = new RustStream({ name: "bench-publish", version: "0" }).broker(
            new PulsarBroker({ url }),
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
    },
  ];
}

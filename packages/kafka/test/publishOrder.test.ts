import { type Delivery, isRustStreamError } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type ConnectedKafkaBroker, KafkaPosition, KafkaTopic } from "../src/index.js";
import { brokerFor, connect, everywhere } from "./connections.js";

// Publishes made one after another without waiting for each land on their partition in the order
// they were made, and a record the cluster refuses fails alone: the records published around it
// land, in order. The kafkajs engine sends what waits behind a topic's request as one request, so
// a refusal there must not fail the records it went with. On both engines and in-process.

const COUNT = 30;

function offsetOf(receipt: { position?: string }): string {
  const target = KafkaPosition.parse(receipt.position ?? "").target;
  if (target.kind !== "offset") throw new Error(`no offset in ${receipt.position}`);
  return `${target.partition}:${target.offset}`;
}

async function readBack(connected: ConnectedKafkaBroker, topic: string, count: number) {
  const subscription = await connected.subscribe(
    new KafkaTopic(topic, { group: uniqueName("reader"), start: "earliest" }),
  );
  const out: Delivery[] = [];
  while (out.length < count) {
    const next = await subscription.next();
    if (next.done) throw new Error(`${topic} ended after ${out.length} records`);
    next.value.ack();
    out.push(next.value);
  }
  await subscription.close();
  return out.map((d) => text(d.payload));
}

for (const where of everywhere) {
  describe(`${where}: publishes not waited for one by one`, () => {
    it("land on their partition in the order they were made", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const topic = uniqueName(`order-${where}`);
        const created = await connected.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: 3 } }),
        );
        await created.close();
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        const labels = Array.from({ length: COUNT }, (_, i) => `r-${i}`);
        const receipts = await Promise.all(
          labels.map((label) =>
            publisher.publish({ name: topic, payload: bytes(label), partitionKey: "one-key" }),
          ),
        );
        const partition = offsetOf(receipts[0]!).split(":")[0];
        expect(receipts.map(offsetOf)).toEqual(labels.map((_, i) => `${partition}:${i}`));
        expect(await readBack(connected, topic, COUNT)).toEqual(labels);
      } finally {
        await connected.shutdown();
      }
    }, 60_000);

    it("a burst larger than the cluster takes in one record batch lands, in order", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const topic = uniqueName(`burst-${where}`);
        const created = await connected.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: 1 } }),
        );
        await created.close();
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        // 2.5 MB, over twice the cluster's message.max.bytes (1 048 588) for one record batch.
        const filler = "x".repeat(1000);
        const receipts = await Promise.all(
          Array.from({ length: 2500 }, (_, i) =>
            publisher.publish({ name: topic, payload: bytes(`${i}:${filler}`) }),
          ),
        );
        expect(receipts.map(offsetOf)).toEqual(receipts.map((_, i) => `0:${i}`));
      } finally {
        await connected.shutdown();
      }
    }, 60_000);

    it("a record the cluster refuses fails alone; those around it land, in order", async () => {
      // Over the cluster's message.max.bytes (1 048 588) and under the broker's own check, so the
      // cluster refuses it (librdkafka, whose own limit is lower, refuses it before sending).
      const connected = await connect(where, brokerFor(where, { maxMessageBytes: 2_000_000 }));
      try {
        const topic = uniqueName(`refused-${where}`);
        const created = await connected.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: 1 } }),
        );
        await created.close();
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        const labels = ["a", "b", "too-large", "c", "d"];
        const results = await Promise.allSettled(
          labels.map((label) =>
            publisher.publish({
              name: topic,
              payload: label === "too-large" ? new Uint8Array(1_200_000) : bytes(label),
            }),
          ),
        );
        const refused = results[2]!;
        expect(refused.status).toBe("rejected");
        const reason = (refused as PromiseRejectedResult).reason;
        expect(isRustStreamError(reason, "publish-refused"), String(reason)).toBe(true);
        const landed = results
          .filter((r) => r.status === "fulfilled")
          .map((r) => offsetOf(r.value));
        expect(landed).toEqual(["0:0", "0:1", "0:2", "0:3"]);
        expect(await readBack(connected, topic, 4)).toEqual(["a", "b", "c", "d"]);
      } finally {
        await connected.shutdown();
      }
    }, 60_000);
  });
}

import {
  type Delivery,
  isRustStreamError,
  type Publisher,
  RustStream,
  reply,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedKafkaBroker,
  KafkaPosition,
  type KafkaPublishOptions,
  KafkaTopic,
  partitionOfKey,
  roundRobinPartitions,
} from "../src/index.js";
import { brokerFor, connect, everywhere } from "./connections.js";

// Publishing: the partition key is the record key (and a delivery's key is the record's), an
// explicit partition is a typed option, a partition the topic lacks and a record over the size
// limit are refused before anything is sent, and the round-robin middleware spreads keyless
// replies. On both engines and in-process.

async function next(
  subscription: Awaited<ReturnType<ConnectedKafkaBroker["subscribe"]>>,
): Promise<Delivery> {
  const got = await subscription.next();
  if (got.done) throw new Error("the subscription ended");
  await got.value.ack();
  return got.value;
}

function partitionOf(receipt: { position?: string }): number {
  const target = KafkaPosition.parse(receipt.position ?? "").target;
  if (target.kind !== "offset") throw new Error(`no offset in ${receipt.position}`);
  return target.partition;
}

for (const where of everywhere) {
  describe(where, () => {
    it("the key is the record key; an explicit partition wins; a missing partition is refused", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const topic = uniqueName(`publish-${where}`);
        const subscription = await connected.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: 3 } }),
        );
        // Typed: a Kafka publisher takes { partition }, and nothing else.
        const publisher: Publisher<KafkaPublishOptions> = await connected
          .defaultPublishPolicy()
          .pair(connected);
        const keyed = await publisher.publish({
          name: topic,
          payload: bytes("keyed"),
          partitionKey: "k-1",
        });
        const d1 = await next(subscription);
        expect(text(d1.payload)).toBe("keyed");
        expect(d1.partitionKey).toEqual(bytes("k-1"));
        expect(d1.partition).toBe(partitionOf(keyed));
        const pinned = await publisher.publish({
          name: topic,
          payload: bytes("pinned"),
          partitionKey: "k-1",
          options: { partition: 2 },
        });
        expect(partitionOf(pinned)).toBe(2);
        const d2 = await next(subscription);
        expect([d2.partition, text(d2.payload)]).toEqual([2, "pinned"]);
        await publisher.publish({ name: topic, payload: bytes("keyless") });
        expect((await next(subscription)).partitionKey).toBeUndefined();
        const refused = await publisher
          .publish({ name: topic, payload: bytes("nowhere"), options: { partition: 3 } })
          .catch((error: unknown) => error);
        expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
        expect(String((refused as Error).message)).toMatch(/has 3 partitions/);
        const unknown = await publisher
          // @ts-expect-error: not a Kafka publish option
          .publish({ name: topic, payload: bytes("x"), options: { priority: 1 } })
          .catch((error: unknown) => error);
        expect(isRustStreamError(unknown, "unsupported"), String(unknown)).toBe(true);
        await subscription.close();
      } finally {
        await connected.shutdown();
      }
    }, 60_000);

    it("a record over maxMessageBytes is refused before it is sent; the next one goes", async () => {
      const connected = await connect(where, brokerFor(where, { maxMessageBytes: 1000 }));
      try {
        const topic = uniqueName(`size-${where}`);
        const subscription = await connected.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}` }),
        );
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        const refused = await publisher
          .publish({ name: topic, payload: new Uint8Array(990), partitionKey: "0123456789-key" })
          .catch((error: unknown) => error);
        expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
        expect(String((refused as Error).message)).toMatch(/maxMessageBytes \(1000\)/);
        await publisher.publish({ name: topic, payload: bytes("small") });
        // Only the small one ever arrives: nothing of the refused one was sent.
        expect(text((await next(subscription)).payload)).toBe("small");
        await subscription.close();
      } finally {
        await connected.shutdown();
      }
    }, 60_000);

    it("round-robin middleware spreads keyless replies over the partitions; keyed ones pass", async () => {
      const topic = uniqueName(`in-${where}`);
      const replies = `${topic}.replies`;
      // One broker object for the app and the test: in-process, it holds the one stand-in cluster.
      const broker = brokerFor(where);
      const setup = await connect(where, broker);
      try {
        // The replies topic with its three partitions, before the first reply goes there.
        const created = await setup.subscribe(
          new KafkaTopic(replies, { group: `g-${replies}`, create: { partitions: 3 } }),
        );
        await created.close();
      } finally {
        await setup.shutdown();
      }
      const app = new RustStream({ name: `rr-${topic}`, version: "1.0.0" })
        .use({ publish: roundRobinPartitions({ partitions: 3, topics: [replies] }) })
        .broker(broker, (b) => {
          b.subscriber(new KafkaTopic(topic, { commit: "tracked" }))
            .reply(replies)
            .handle((message) => {
              const { i } = message as { i: number };
              return i === 6 ? reply(message, { partitionKey: "keyed" }) : message;
            });
        });
      const t =
        where === "in-process"
          ? await TestApp.start(app)
          : await TestApp.startLive(app, { withinMs: 30_000 });
      try {
        for (let i = 0; i < 7; i++) await t.publish(topic, { i });
      } finally {
        await t.stop();
      }
      const reader = await connect(where, broker);
      try {
        const subscription = await reader.subscribe(
          new KafkaTopic(replies, { group: uniqueName("reader"), start: "earliest" }),
        );
        const byPartition = new Map<number, number[]>();
        for (let n = 0; n < 7; n++) {
          const d = await next(subscription);
          const { i } = JSON.parse(text(d.payload)) as { i: number };
          const partition = d.partition!;
          if (i === 6) {
            // A keyed reply passes untouched: its key, and the partition the key gives.
            expect(d.partitionKey).toEqual(bytes("keyed"));
            expect(partition).toBe(partitionOfKey("murmur2", bytes("keyed"), 3));
            continue;
          }
          byPartition.set(partition, [...(byPartition.get(partition) ?? []), i]);
        }
        expect(
          [...byPartition.entries()].sort(([a], [b]) => a - b),
          "keyless replies in turn over partitions 0, 1, 2",
        ).toEqual([
          [0, [0, 3]],
          [1, [1, 4]],
          [2, [2, 5]],
        ]);
      } finally {
        await reader.shutdown();
      }
    }, 90_000);
  });
}

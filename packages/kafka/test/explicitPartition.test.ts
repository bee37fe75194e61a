import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedKafkaBroker,
  type KafkaBroker,
  KafkaPosition,
  KafkaPublish,
  KafkaTopic,
  type Partitioner,
  partitionOfKey,
  roundRobinPartitions,
} from "../src/index.js";
import { brokerFor, connect, everywhere, type Where } from "./connections.js";

// An explicit partition (`options: { partition }`) wins over every partitioner: over the key under
// murmur2 and consistent-random, and over round robin for a keyless record; through the bare
// publisher, app.publish, a transaction and the round-robin middleware alike. Every key here hashes to another
// partition than the one asked for, and the middleware spreads over fewer partitions than the
// topic has, so an engine whose partitioner ignored the option would show (a key hashing to the
// asked partition, or round robin over the whole topic, would hide it). On both engines and
// in-process; the receipt and the record read back must agree.

const PARTITIONS = 4;
const partitioners: readonly Partitioner[] = ["murmur2", "consistent-random"];

/** `count` keys that `partitioner` puts anywhere but on `partition`. */
function keysAway(partitioner: Partitioner, partition: number, count: number): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    const key = `key-${i}`;
    if (partitionOfKey(partitioner, bytes(key), PARTITIONS) !== partition) keys.push(key);
  }
  return keys;
}

interface Pinned {
  readonly label: string;
  readonly key: string | undefined;
  readonly partition: number;
}

/**
 * Records pinned to each partition: two with keys `partitioner` puts elsewhere, one without a key.
 * The partitions are asked for from the last down, so the keyless ones ask against the round
 * robin's own turn.
 */
function pinnedRecords(partitioner: Partitioner): Pinned[] {
  const out: Pinned[] = [];
  for (let partition = PARTITIONS - 1; partition >= 0; partition--) {
    for (const key of [...keysAway(partitioner, partition, 2), undefined]) {
      out.push({ label: `${partitioner}/${key ?? "keyless"}->${partition}`, key, partition });
    }
  }
  return out;
}

/** What each publish asked for, by its label. */
type Asked = Map<string, number>;

function askedOf(records: readonly Pinned[]): Asked {
  return new Map(records.map((r) => [r.label, r.partition]));
}

function partitionOf(receipt: { position?: string }): number {
  const target = KafkaPosition.parse(receipt.position ?? "").target;
  if (target.kind !== "offset") throw new Error(`no offset in ${receipt.position}`);
  return target.partition;
}

/** Creates `topic` with its partitions, through a subscription of its own. */
async function createTopic(where: Where, broker: KafkaBroker, topic: string): Promise<void> {
  const connected = await connect(where, broker);
  try {
    const created = await connected.subscribe(
      new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: PARTITIONS } }),
    );
    await created.close();
  } finally {
    await connected.shutdown();
  }
}

/** The partition each record of `topic` was read from, by its (JSON text) payload. */
async function partitionsRead(
  where: Where,
  broker: KafkaBroker,
  topic: string,
  count: number,
): Promise<Map<string, number>> {
  const connected: ConnectedKafkaBroker = await connect(where, broker);
  try {
    const subscription = await connected.subscribe(
      new KafkaTopic(topic, { group: uniqueName("reader"), start: "earliest" }),
    );
    const read = new Map<string, number>();
    while (read.size < count) {
      const next = await subscription.next();
      if (next.done) throw new Error(`${topic} ended after ${read.size} records`);
      next.value.ack();
      read.set(JSON.parse(text(next.value.payload)) as string, next.value.partition!);
    }
    return read;
  } finally {
    await connected.shutdown();
  }
}

for (const where of everywhere) {
  describe(`${where}: an explicit partition`, () => {
    it("wins over the key under either partitioner, and over round robin without one (bare publisher)", async () => {
      const broker = brokerFor(where);
      const topic = uniqueName(`pinned-${where}`);
      await createTopic(where, broker, topic);
      const records = partitioners.flatMap(pinnedRecords);
      const receipts = new Map<string, number>();
      const connected = await connect(where, broker);
      try {
        for (const partitioner of partitioners) {
          const publisher = await new KafkaPublish({ partitioner }).pair(connected);
          for (const { label, key, partition } of pinnedRecords(partitioner)) {
            const receipt = await publisher.publish({
              name: topic,
              payload: bytes(JSON.stringify(label)),
              ...(key === undefined ? {} : { partitionKey: key }),
              options: { partition },
            });
            receipts.set(label, partitionOf(receipt));
          }
        }
      } finally {
        await connected.shutdown();
      }
      const asked = askedOf(records);
      expect(receipts, "the receipts' partitions").toEqual(asked);
      expect(await partitionsRead(where, broker, topic, asked.size), "where they landed").toEqual(
        asked,
      );
    }, 90_000);

    it("wins through app.publish, and the round-robin middleware keeps to its partitions", async () => {
      const broker = brokerFor(where);
      const pinned = uniqueName(`app-pinned-${where}`);
      const spread = `${pinned}.spread`;
      await createTopic(where, broker, pinned);
      await createTopic(where, broker, spread);
      // Round robin over the first two of the four partitions: the engine's own round robin for
      // keyless records would go over all four.
      const app = new RustStream({ name: `pin-${pinned}`, version: "1.0.0" })
        .use({ publish: roundRobinPartitions({ partitions: 2, topics: [spread] }) })
        .broker(broker, () => {});
      const t =
        where === "in-process"
          ? await TestApp.start(app)
          : await TestApp.startLive(app, { withinMs: 30_000 });
      const records = pinnedRecords("murmur2");
      const asked = askedOf(records);
      const spreadAsked: Asked = new Map();
      const receipts = new Map<string, number>();
      try {
        for (const { label, key, partition } of records) {
          const receipt = await t.running.publish(pinned, label, {
            ...(key === undefined ? {} : { partitionKey: key }),
            options: { partition },
          });
          receipts.set(label, partitionOf(receipt));
        }
        for (let i = 0; i < 6; i++) {
          const label = `spread-${i}`;
          spreadAsked.set(label, i % 2);
          receipts.set(label, partitionOf(await t.running.publish(spread, label)));
        }
      } finally {
        await t.stop();
      }
      expect(receipts, "the receipts' partitions").toEqual(new Map([...asked, ...spreadAsked]));
      expect(await partitionsRead(where, broker, pinned, asked.size), "pinned records").toEqual(
        asked,
      );
      expect(
        await partitionsRead(where, broker, spread, spreadAsked.size),
        "round robin over partitions 0 and 1",
      ).toEqual(spreadAsked);
    }, 90_000);

    it("wins inside a transaction", async () => {
      const broker = brokerFor(where, { transactionalId: uniqueName(`tx-pinned-${where}`) });
      const topic = uniqueName(`tx-pinned-${where}`);
      await createTopic(where, broker, topic);
      const records = pinnedRecords("murmur2");
      const connected = await connect(where, broker);
      try {
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        await publisher.transaction(async (tx) => {
          for (const { label, key, partition } of records) {
            await tx.publish({
              name: topic,
              payload: bytes(JSON.stringify(label)),
              ...(key === undefined ? {} : { partitionKey: key }),
              options: { partition },
            });
          }
        });
      } finally {
        await connected.shutdown();
      }
      const asked = askedOf(records);
      expect(await partitionsRead(where, broker, topic, asked.size)).toEqual(asked);
    }, 90_000);
  });
}

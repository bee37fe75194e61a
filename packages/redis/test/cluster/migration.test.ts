import { brokers, bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { RedisBroker, RedisList, RedisPublish, RedisPubSub, RedisStream } from "../../src/index.js";
import { eventually } from "../appSupport.js";
import { clusterOptions, inspectCluster, inspectNode } from "./env.js";
import { underDisruption } from "./failoverScenario.js";

// A slot moved to another master mid-stream (IMPORTING, MIGRATING, MIGRATE of its keys, the slot
// assigned anew, as `redis-cli --cluster reshard` does) while a service reads from it: commands meet
// ASK while the keys are on their way and MOVED after; the blocked reader is answered MOVED by its
// old node and follows the slot. A reliable list's three keys share one slot by their names, so they
// move together and its scripts keep running on one node.

const cluster = brokers["redis-cluster"];
const log = (line: string) => process.stderr.write(`${line}\n`);
const inspector = inspectCluster();
afterAll(() => inspector.disconnect());

/** How many of the package's blocking readers wait in XREADGROUP on node `i`. */
async function readersOn(i: number): Promise<number> {
  const node = inspectNode(i);
  try {
    const list = (await node.client("LIST")) as string;
    return list
      .split("\n")
      .filter((line) => line.includes("name=ruststream-reader") && line.includes("cmd=xreadgroup"))
      .length;
  } finally {
    node.disconnect();
  }
}

/** Moves `key`'s slot to another master; answers where from and where to. */
async function moveSlotOf(key: string): Promise<{ from: number; to: number }> {
  const slot = await cluster.slotOf(key);
  const from = await cluster.masterOf(key);
  const to = (await cluster.masters()).find((m) => m.node !== from)?.node;
  if (to === undefined) throw new Error("no other master to move the slot to");
  const began = Date.now();
  await cluster.migrateSlot(slot, to);
  log(
    `[slot migration] slot ${slot} moved from node ${from} to node ${to} in ${Date.now() - began} ms`,
  );
  return { from, to };
}

describe("a slot migrated mid-stream", () => {
  it(
    "a stream: the reader follows its slot to the new master, nothing lost",
    () =>
      cluster.exclusive(async () => {
        const key = uniqueName("migrate-stream");
        let moved = { from: 0, to: 0 };
        await underDisruption({
          label: "stream slot migration",
          options: clusterOptions,
          source: new RedisStream(key, { blockMs: 500 }),
          group: `${key}.service`,
          publisherOf: (producer) => producer.defaultPublishPolicy().pair(producer),
          disrupt: async () => {
            moved = await moveSlotOf(key);
          },
          // The reader waits on the new master, and none is left on the old one.
          whileRunning: () =>
            eventually(
              "the reader on the new master",
              async () => (await readersOn(moved.to)) >= 1 && (await readersOn(moved.from)) === 0,
            ),
        });
        expect(await cluster.masterOf(key)).toBe(moved.to);
        // Every entry acknowledged on the new master: the group moved with the stream.
        const pending = (await inspector.xpending(key, `${key}.service`)) as [number];
        expect(pending[0]).toBe(0);
      }),
    240_000,
  );

  it(
    "a reliable list: its queue, processing list and recovery set share a slot and move together",
    () =>
      cluster.exclusive(async () => {
        const key = uniqueName("migrate-list");
        const source = new RedisList(key, { blockMs: 500, count: 8, recoveryIdleMs: 5000 });
        const keys = source.keys(true);
        expect(keys).toEqual({
          queue: key,
          processing: `{${key}}.processing`,
          recovery: `{${key}}.recovery`,
        });
        // The cluster's own hashing puts the three in one slot.
        const slots = new Set(
          await Promise.all([keys.queue, keys.processing, keys.recovery].map(cluster.slotOf)),
        );
        expect(slots.size).toBe(1);
        let moved = { from: 0, to: 0 };
        await underDisruption({
          label: "list slot migration",
          options: clusterOptions,
          source,
          group: `${key}.service`,
          publisherOf: (producer) => new RedisPublish({ transport: "list" }).pair(producer),
          disrupt: async () => {
            moved = await moveSlotOf(key);
          },
        });
        for (const k of [keys.queue, keys.processing, keys.recovery]) {
          expect(await cluster.masterOf(k), k).toBe(moved.to);
        }
        await eventually(
          "nothing left in the queue, in processing or claimed",
          async () =>
            (await inspector.llen(keys.queue)) === 0 &&
            (await inspector.llen(keys.processing)) === 0 &&
            (await inspector.zcard(keys.recovery)) === 0,
        );
      }),
    240_000,
  );

  it(
    "while its keys are on their way (ASK): a publish and a blocked reader reach the key on its new node",
    () =>
      cluster.exclusive(async () => {
        const key = uniqueName("migrate-ask");
        const connected = await new RedisBroker(clusterOptions()).connect();
        try {
          const sub = await connected.subscribe(new RedisStream(key, { group: "g", blockMs: 300 }));
          const publisher = await connected.defaultPublishPolicy().pair(connected);
          const next = async () => {
            const got = await sub.next();
            if (got.done) throw new Error("the subscription ended");
            await got.value.ack();
            return text(got.value.payload);
          };
          await publisher.publish({ name: key, payload: bytes("before") });
          expect(await next()).toBe("before");
          const slot = await cluster.slotOf(key);
          const from = await cluster.masterOf(key);
          const to = (await cluster.masters()).find((m) => m.node !== from)!.node;
          let during = "";
          await cluster.migrateSlot(slot, to, {
            beforeAssign: async () => {
              // The key left the source, which still owns the slot and answers ASK for it.
              const source = inspectNode(from);
              expect(await source.call("CLUSTER", "COUNTKEYSINSLOT", String(slot))).toBe(0);
              source.disconnect();
              await publisher.publish({ name: key, payload: bytes("during") });
              during = await next();
            },
          });
          expect(during).toBe("during");
          await publisher.publish({ name: key, payload: bytes("after") });
          expect(await next()).toBe("after");
          expect(await cluster.masterOf(key)).toBe(to);
        } finally {
          await connected.shutdown();
        }
      }),
    120_000,
  );

  it(
    "a sharded channel: its node unsubscribes the subscriber, which subscribes again on the new master",
    () =>
      cluster.exclusive(async () => {
        const channel = uniqueName("migrate-channel");
        const connected = await new RedisBroker(clusterOptions()).connect();
        try {
          const sub = await connected.subscribe(new RedisPubSub(channel));
          const publisher = await new RedisPublish({ transport: "pubsub" }).pair(connected);
          const shardSubscribers = async (node: number) => {
            const client = inspectNode(node);
            try {
              return ((await client.call("PUBSUB", "SHARDNUMSUB", channel)) as [string, number])[1];
            } finally {
              client.disconnect();
            }
          };
          const from = await cluster.masterOf(channel);
          expect(await shardSubscribers(from)).toBe(1);
          await publisher.publish({ name: channel, payload: bytes("before") });
          const before = await sub.next();
          if (before.done) throw new Error("ended");
          expect(text(before.value.payload)).toBe("before");
          const { to } = await moveSlotOf(channel);
          await eventually(
            "the subscriber on the new master, gone from the old",
            async () => (await shardSubscribers(to)) === 1 && (await shardSubscribers(from)) === 0,
          );
          await publisher.publish({ name: channel, payload: bytes("after") });
          const after = await sub.next();
          if (after.done) throw new Error("ended");
          expect(text(after.value.payload)).toBe("after");
        } finally {
          await connected.shutdown();
        }
      }),
    120_000,
  );
});

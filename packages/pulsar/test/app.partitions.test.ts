import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, sleep, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PulsarBroker, PulsarFailover, PulsarShared } from "../src/index.js";
import { createPartitionedTopic, eventually } from "./env.js";

// A partitioned topic read by a whole app with keyed lanes: each key's messages are handled in
// publish order however the four lanes interleave, and "partition" lanes see every partition index.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

interface Order {
  readonly key: string;
  readonly seq: number;
}

const keys = ["k-a", "k-b", "k-c", "k-d", "k-e", "k-f"];

/** An app with two mounts on one partitioned topic: lanes by partition key, and by partition. */
function keyedApp(
  broker: PulsarBroker,
  topic: string,
  seen: Map<string, number[]>,
  partitions: Set<number>,
) {
  return new RustStream({ name: "keyed", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<Order>(new PulsarShared(topic, { subscription: "by-key", partitioned: true }))
      .name("by-key")
      .workers(4, { key: "partitionKey" })
      .handle(async (order) => {
        // Uneven work, so lanes overtake each other: only the per-key order is kept.
        await sleep(order.seq % 3 === 0 ? 4 : 0);
        const list = seen.get(order.key) ?? [];
        list.push(order.seq);
        seen.set(order.key, list);
      });
    b.subscriber<Order>(
      new PulsarFailover(topic, { subscription: "by-partition", partitioned: true }),
    )
      .name("by-partition")
      .workers(3, { key: "partition" })
      .handle((_order, ctx) => {
        const partition = ctx.delivery.partition;
        if (partition !== undefined) partitions.add(partition);
      });
  });
}

/** 20 messages per key, each publish awaited (so publish order is settled), then the reaction. */
async function publishAll(t: TestApp, topic: string): Promise<number> {
  let total = 0;
  for (let seq = 0; seq < 20; seq++) {
    for (const key of keys) {
      await t.running.publish(topic, { key, seq }, { partitionKey: key });
      total++;
    }
  }
  await t.settle();
  return total;
}

describe("a partitioned topic with keyed lanes", () => {
  it("on the real broker: every key in order across 3 partitions, every partition seen", async () => {
    const topic = uniqueName("keyed");
    await createPartitionedTopic(topic, 3);
    const seen = new Map<string, number[]>();
    const partitions = new Set<number>();
    t = await TestApp.startLive(
      keyedApp(new PulsarBroker({ url: requireEnv("PULSAR_URL") }), topic, seen, partitions),
      { withinMs: 20_000 },
    );
    const total = await publishAll(t, topic);
    await eventually(() => [...seen.values()].flat().length === total, 20_000, "every message");
    for (const key of keys) expect(seen.get(key), key).toEqual([...Array(20).keys()]);
    await eventually(() => partitions.size === 3, 10_000, "every partition");
    expect([...partitions].sort()).toEqual([0, 1, 2]);
  });

  it("in-process: the same, on the stand-in's partitions", async () => {
    const topic = uniqueName("keyed");
    const seen = new Map<string, number[]>();
    const partitions = new Set<number>();
    const broker = new PulsarBroker({
      url: "pulsar://in-process.invalid",
      inProcess: { partitionedTopics: { [topic]: 3 } },
    });
    t = await TestApp.start(keyedApp(broker, topic, seen, partitions));
    const total = await publishAll(t, topic);
    await t.settle();
    expect([...seen.values()].flat().length).toBe(total);
    for (const key of keys) expect(seen.get(key), key).toEqual([...Array(20).keys()]);
    expect([...partitions].sort()).toEqual([0, 1, 2]);
  });

  it("a descriptor declared partitioned on a topic that is not is refused at startup", async () => {
    const topic = uniqueName("flat");
    const app = new RustStream({ name: "flat", version: "1.0.0" }).broker(
      new PulsarBroker({ url: "pulsar://in-process.invalid" }),
      (b) => {
        b.subscriber(new PulsarShared(topic, { subscription: "s", partitioned: true })).handle(
          () => {},
        );
      },
    );
    await expect(TestApp.start(app)).rejects.toThrow(/declared partitioned/);
  });
});

import { isRustStreamError, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { KafkaTopic } from "../src/index.js";
import { brokerFor, connect } from "./connections.js";

// Where a subscription's consumer group comes from: the descriptor, else the broker's option, else
// the name of the app connecting the broker; never one made up per process.

describe("the consumer group", () => {
  it("a bare name in an app is read by the app's group", async () => {
    const topic = uniqueName("bare");
    const handled: unknown[] = [];
    const app = new RustStream({ name: "billing", version: "1.0.0" }).broker(
      brokerFor("in-process"),
      (b) => {
        b.subscriber(topic).handle((message) => {
          handled.push(message);
        });
      },
    );
    const t = await TestApp.start(app);
    try {
      const [described] = app.describe().brokers;
      expect(described?.kind).toBe("kafka");
      expect(described?.server?.host).toBe("127.0.0.1:9092");
      await t.publish(topic, { n: 1 });
      expect(handled).toEqual([{ n: 1 }]);
    } finally {
      await t.stop();
    }
  });

  it("the descriptor's group, else the broker's", async () => {
    const connected = await connect(
      "in-process",
      brokerFor("in-process", { group: "from-broker" }),
    );
    try {
      const bare = await connected.subscribe(uniqueName("t"));
      expect(bare.group).toBe("from-broker");
      const own = await connected.subscribe(new KafkaTopic(uniqueName("t"), { group: "own" }));
      expect(own.group).toBe("own");
    } finally {
      await connected.shutdown();
    }
  });

  it("without any, subscribing is refused, naming the three ways to give one", async () => {
    const connected = await connect("in-process", brokerFor("in-process"));
    try {
      const refused = await connected.subscribe(uniqueName("t")).catch((e: unknown) => e);
      expect(isRustStreamError(refused, "invalid-argument")).toBe(true);
      expect(String((refused as Error).message)).toMatch(
        /through an app.*group option.*new KafkaTopic/,
      );
    } finally {
      await connected.shutdown();
    }
  });
});

// An app's subscribers share the app's group: each must be given its own topic's partitions only.
// kafkajs's assignor handed the group's topics round all its members, whatever each subscribed to,
// so with two topics of four partitions each subscriber was given half of the other's, unread.
describe.each([
  "kafkajs",
  "librdkafka",
  "in-process",
] as const)("one group, two topics, on %s", (where) => {
  it("each subscriber reads every partition of its own topic", async () => {
    const orders = uniqueName("group-orders");
    const refunds = uniqueName("group-refunds");
    const handled = { orders: new Set<number>(), refunds: new Set<number>() };
    const app = new RustStream({ name: uniqueName("two-topics"), version: "1.0.0" }).broker(
      brokerFor(where),
      (b) => {
        for (const [name, seen] of [
          [orders, handled.orders],
          [refunds, handled.refunds],
        ] as const) {
          b.subscriber<{ n: number }>(new KafkaTopic(name, { create: { partitions: 4 } })).handle(
            (message) => {
              seen.add(message.n);
            },
          );
        }
      },
    );
    const t = where === "in-process" ? await TestApp.start(app) : await TestApp.startLive(app);
    try {
      // Sixteen keys each, so every partition of both topics holds messages.
      for (let n = 0; n < 16; n++) {
        await t.publish(orders, { n }, { partitionKey: `k${n}` });
        await t.publish(refunds, { n }, { partitionKey: `k${n}` });
      }
      await expect
        .poll(() => handled.orders.size + handled.refunds.size, { timeout: 30_000 })
        .toBe(32);
    } finally {
      await t.stop();
    }
  }, 60_000);
});

import { randomUUID } from "node:crypto";
import { isRustStreamError, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { describe, expect, it } from "vitest";
import { RabbitBroker, RabbitExchange, RabbitQueue, RabbitQuorumQueue } from "../src/index.js";

// The broker's `topology` option: what a service publishes to without reading it, declared (or
// checked) at connect, so a reply to a queue the service does not read is routable from the first
// delivery on, under `mandatory`.

const name = (label: string) => `topo-${label}-${randomUUID().slice(0, 8)}`;

function replyingApp(broker: RabbitBroker, orders: string, receipts: string): RustStream {
  const app = new RustStream({ name: "topology-option", version: "1.0.0" });
  app.broker(broker, (b) => {
    b.subscriber(new RabbitQuorumQueue(orders))
      .reply<{ ok: number }>(receipts)
      .handle((order: { id: number }) => ({ ok: order.id }));
  });
  return app;
}

describe("the topology option (in process)", () => {
  it("a reply to a queue nobody reads is unroutable without it, and delivered with it", async () => {
    const url = "amqp://127.0.0.1:1";
    const without = await TestApp.start(
      replyingApp(new RabbitBroker({ url, declare: true }), "orders", "receipts"),
    );
    try {
      await without.publish("orders", { id: 1 });
      // The reply was refused as unroutable (mandatory): the delivery is retried, not acked.
      without.subscriber("orders").assertOutcomes("retry-after");
    } finally {
      await without.stop();
    }
    const broker = new RabbitBroker({
      url,
      declare: true,
      topology: [new RabbitQueue("receipts")],
    });
    const t = await TestApp.start(replyingApp(broker, "orders", "receipts"));
    try {
      await t.publish("orders", { id: 2 });
      t.subscriber("orders").assertOutcomes("ack");
      expect(t.published("receipts").map((m) => m.value)).toEqual([{ ok: 2 }]);
    } finally {
      await t.stop();
    }
  });

  it("refuses what is not a descriptor, where the broker is built", () => {
    expect(
      () =>
        new RabbitBroker({
          url: "amqp://127.0.0.1:1",
          topology: ["receipts"] as unknown as RabbitQueue[],
        }),
    ).toThrow(/topology: give a list of RabbitQueue/);
  });
});

describe("the topology option (real node)", () => {
  it("declares at connect: the reply lands in its queue", async () => {
    const url = requireEnv("RABBITMQ_URL");
    const orders = name("orders");
    const receipts = name("receipts");
    const broker = new RabbitBroker({ url, declare: true, topology: [new RabbitQueue(receipts)] });
    const t = await TestApp.startLive(replyingApp(broker, orders, receipts));
    const reader = await new RabbitBroker({ url }).connect();
    try {
      await t.publish(orders, { id: 3 });
      // The queue the option declared holds the receipt: read it back from the server.
      const subscription = await reader.subscribe(new RabbitQueue(receipts));
      const iterator = subscription[Symbol.asyncIterator]();
      const next = await iterator.next();
      expect(next.done).toBe(false);
      expect(JSON.parse(new TextDecoder().decode(next.value?.payload))).toEqual({ ok: 3 });
      await next.value?.ack();
      await subscription.close();
    } finally {
      await reader.shutdown();
      await t.stop();
    }
  });

  it("checks without declare: a missing queue or exchange fails the connect, naming it", async () => {
    const url = requireEnv("RABBITMQ_URL");
    const missing = name("missing");
    for (const item of [new RabbitQueue(missing), new RabbitExchange(missing)]) {
      const error = await new RabbitBroker({ url, topology: [item] }).connect().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRustStreamError(error, "invalid-argument")).toBe(true);
      expect(String((error as Error).message)).toContain(`"${missing}" does not exist`);
    }
  });
});

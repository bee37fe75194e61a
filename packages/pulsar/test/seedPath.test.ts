import { type Receipt, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import {
  PulsarBroker,
  type PulsarDelivery,
  PulsarShared,
  parsePulsarPosition,
} from "../src/index.js";
import { MessageId } from "../src/wire/index.js";
import { eventually, topicStats } from "./env.js";

// The path of one Pulsar message through a service, as RustStream's documentation draws it: the
// broker pushes under flow permits, the delivery carries payload, topic, message id, properties
// and key, the reply is published and confirmed, and only then is the delivery acknowledged.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

interface SubscriptionStats {
  readonly unackedMessages: number;
  readonly msgBacklog: number;
  readonly consumers: { readonly availablePermits: number }[];
}

async function subscriptionStats(topic: string, name: string): Promise<SubscriptionStats> {
  const stats = await topicStats(topic);
  return stats.subscriptions[name] as unknown as SubscriptionStats;
}

describe("the path of one message", () => {
  it("pushed under flow permits: a consumer that does not pull holds no more than its queue", async () => {
    const topic = uniqueName("permits");
    const connected = await new PulsarBroker({ url: requireEnv("PULSAR_URL") }).connect();
    try {
      const sub = await connected.subscribe(
        new PulsarShared(topic, { subscription: "s", receiverQueueSize: 5, retryTopic: false }),
      );
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      for (let i = 0; i < 20; i++) {
        await publisher.publish({
          name: topic,
          payload: bytes(`m${i}`),
          partitionKey: `k${i % 3}`,
        });
      }
      // The broker pushed five (the permits), holds the other fifteen, and waits for more permits.
      await eventually(
        async () => (await subscriptionStats(topic, "s")).unackedMessages === 5,
        10_000,
        "five messages pushed",
      );
      const held = await subscriptionStats(topic, "s");
      expect(held.consumers[0]?.availablePermits).toBe(0);
      expect(held.msgBacklog).toBe(20);
      const got: PulsarDelivery[] = [];
      while (got.length < 20) {
        const next = await sub.next();
        if (next.done) throw new Error("ended");
        got.push(next.value);
      }
      expect(got.map((d) => text(d.payload))).toEqual([...Array(20).keys()].map((i) => `m${i}`));
      const first = got[0]!;
      expect(first.name).toBe(topic);
      expect(first.topic).toBe(`persistent://public/default/${topic}`);
      expect(first.partition).toBeUndefined();
      expect(text(first.partitionKey!)).toBe("k0");
      // The position is the message id, stored as text and read back.
      const position = parsePulsarPosition(first.position.toString());
      expect(position.kind === "message" && position.messageId.equals(first.messageId)).toBe(true);
      for (const d of got) await d.ack();
      await eventually(
        async () => (await subscriptionStats(topic, "s")).msgBacklog === 0,
        10_000,
        "the backlog acknowledged",
      );
    } finally {
      await connected.shutdown();
    }
  });

  it("properties are headers, the key the partition key; the reply resolves on its receipt, then the delivery is acked", async () => {
    const topic = uniqueName("path");
    const replies = uniqueName("replies");
    const receipts: { receipt: Receipt; causeSettled: boolean | undefined }[] = [];
    const handled: { headers: Record<string, string>; key: string | undefined }[] = [];
    const app = new RustStream({ name: "path", version: "1.0.0" })
      .broker(new PulsarBroker({ url: requireEnv("PULSAR_URL") }), (b) => {
        b.subscriber<{ n: number }>(topic)
          .reply<{ doubled: number }>(replies)
          .handle((message, ctx) => {
            handled.push({
              headers: Object.fromEntries(
                [...ctx.headers].map(([name]) => [name, ctx.headers.getString(name) ?? ""]),
              ),
              key: ctx.delivery.partitionKey && text(ctx.delivery.partitionKey),
            });
            return { doubled: message.n * 2 };
          });
      })
      .use({
        publish: async (message, next) => {
          const receipt = await next(message);
          // Resolved on the broker's receipt, before the delivery it answers is settled.
          receipts.push({ receipt, causeSettled: message.cause?.settled });
          return receipt;
        },
      });
    t = await TestApp.startLive(app);
    await t.publish(topic, { n: 21 }, { headers: { "x-tenant": "acme" }, partitionKey: "order-7" });
    expect(handled).toEqual([
      {
        headers: { "content-type": "application/json", "x-tenant": "acme" },
        key: "order-7",
      },
    ]);
    const reply = receipts.find((r) => r.receipt.name === replies);
    expect(reply?.causeSettled).toBe(false);
    expect(MessageId.parse(reply!.receipt.position!).entryId).toBeGreaterThanOrEqual(0n);
    expect(t.published(replies).map((m) => m.value)).toEqual([{ doubled: 42 }]);
    // The subscription (the app's name) has nothing left: the delivery was acked after the reply.
    await eventually(async () => {
      const stats = await subscriptionStats(topic, "path");
      return stats.msgBacklog === 0 && stats.unackedMessages === 0;
    });
  });
});

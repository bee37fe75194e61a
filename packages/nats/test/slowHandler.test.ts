import { AckPolicy, jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { JetStreamSubject } from "../src/index.js";
import { consumerState, eventually, rawClient } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// A handler that runs three times the consumer's ack wait: the subscription tells the server the
// handler is still working (every half ack wait), so the server never delivers it again behind
// its back. The control beside it shows the ack wait is real: a consumer that does not say so
// gets the message again.

const ackWaitMs = 1000;
const made = madeInEachTest();

describe("a handler three times as slow as the ack wait", () => {
  it("is not redelivered: one call, and the server counts no redelivery", async () => {
    const subject = uniqueName("slow");
    made.streams.push(subject);
    const calls: number[] = [];
    const app = new RustStream({ name: "slow", version: "1.0.0" }).broker(liveBroker(), (b) => {
      b.subscriber<{ n: number }>(
        new JetStreamSubject(subject, {
          stream: subject,
          durable: "slow",
          ackWaitMs,
          declare: { subjects: [subject], storage: "memory" },
        }),
      ).handle(async (m) => {
        calls.push(m.n);
        if (m.n === 1) await new Promise((resolve) => setTimeout(resolve, 3 * ackWaitMs));
      });
    });
    made.app(await TestApp.startLive(app, { withinMs: 20_000 }));
    const nc = await rawClient();
    try {
      const client = jetstream(nc);
      await client.publish(subject, JSON.stringify({ n: 1 }));
      await eventually(() => calls.length === 1, 5000, "the first call");
      // Behind it, a sentinel: once it is handled, any redelivery of the first would have been too.
      await client.publish(subject, JSON.stringify({ n: 2 }));
      await eventually(() => calls.includes(2), 4 * ackWaitMs + 5000, "the sentinel");
    } finally {
      await nc.close();
    }
    expect(calls).toEqual([1, 2]);
    await eventually(
      async () => (await consumerState(subject, "slow")).ackPending === 0,
      5000,
      "both acked",
    );
    expect(await consumerState(subject, "slow")).toMatchObject({ redelivered: 0, ackFloor: 2 });
  });

  it("control: a consumer that holds a message as long without working() gets it again", async () => {
    const subject = uniqueName("control");
    made.streams.push(subject);
    const nc = await rawClient();
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: subject, subjects: [subject], storage: StorageType.Memory });
      await jsm.consumers.add(subject, {
        durable_name: "control",
        ack_policy: AckPolicy.Explicit,
        ack_wait: ackWaitMs * 1_000_000,
      });
      const js = jetstream(nc);
      await js.publish(subject, "1");
      const consumer = await js.consumers.get(subject, "control");
      const first = await consumer.next({ expires: 5000 });
      expect(first?.info.deliveryCount).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 3 * ackWaitMs));
      const again = await consumer.next({ expires: 5000 });
      expect(again?.info.deliveryCount).toBe(2);
      again?.ack();
    } finally {
      await nc.close();
    }
  });
});

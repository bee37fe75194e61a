import { RustStream, retry, retryAfter } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQuorumQueue } from "../src/index.js";

// A message the node moved at a quorum queue's delivery limit reaches the dead-letter queue's own
// subscriber as its attempt 1, and a delayed retry there counts on from it: the subscriber gets the
// attempts its own `maxAttempts` allows. It once started past the source's cap and was dropped
// before its handler ran.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe("a dead-letter queue's subscriber (real node)", () => {
  it("counts its own attempts after the node moved the message, through a delayed retry too", async () => {
    const url = requireEnv("RABBITMQ_URL");
    const queue = uniqueName("dl-attempts");
    const dlq = `${queue}.dlq`;
    const seen: string[] = [];
    const app = new RustStream({ name: `dl-${queue}`, version: "1.0.0" }).broker(
      new RabbitBroker({ url, declare: true }),
      (b) => {
        b.subscriber(new RabbitQuorumQueue(queue))
          .maxAttempts(2)
          .deadLetter(dlq)
          .handle((_message, ctx) => {
            seen.push(`source ${ctx.attempt}`);
            return retry();
          });
        b.subscriber(new RabbitQuorumQueue(dlq))
          .maxAttempts(3)
          .handle((_message, ctx) => {
            seen.push(`dead letter ${ctx.attempt}`);
            return ctx.attempt < 3 ? retryAfter(100) : undefined;
          });
      },
    );
    t = await TestApp.startLive(app, { withinMs: 30_000 });
    const connected = await new RabbitBroker({ url, declare: true }).connect();
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: queue, payload: new TextEncoder().encode('{"id":1}') });
      const deadline = Date.now() + 30_000;
      while (!t.subscriber(dlq).outcomes.includes("ack")) {
        if (Date.now() > deadline) throw new Error(`seen ${seen}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(seen).toEqual([
        "source 1",
        "source 2",
        "dead letter 1",
        "dead letter 2",
        "dead letter 3",
      ]);
    } finally {
      await connected.shutdown();
    }
  }, 60_000);
});

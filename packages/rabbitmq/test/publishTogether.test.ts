import { randomUUID } from "node:crypto";
import { isRustStreamError } from "@ruststream/core";
import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { afterEach, describe, expect, it } from "vitest";
import { type ConnectedRabbitBroker, RabbitBroker, RabbitQueue } from "../src/index.js";

// Publishes made together, none awaited before the next is sent, on the one confirm channel: the
// server confirms them with multiple acks where it can, and each keeps its own outcome, its
// confirm, its nack or its return.

const open: ConnectedRabbitBroker[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.shutdown()));
});

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (payload: Uint8Array | undefined) => new TextDecoder().decode(payload);
const name = (label: string) => `together-${label}-${randomUUID().slice(0, 8)}`;

describe("publishes made together (real node)", () => {
  it("a nack or a return among them fails only its own message", async () => {
    // One message fits: the next ones are nacked (reject-publish) while it is there.
    const full = new RabbitQueue(name("full"), {
      arguments: { "x-max-length": 1, "x-overflow": "reject-publish" },
      autoDelete: true,
    });
    const other = new RabbitQueue(name("other"), { autoDelete: true });
    const connected = await new RabbitBroker({
      url: requireEnv("RABBITMQ_URL"),
      declare: true,
      topology: [full, other],
    }).connect();
    open.push(connected);
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const missing = name("missing");

    // All five in one turn, none awaited before the last is sent.
    const outcomes = await Promise.allSettled([
      publisher.publish({ name: full.name, payload: bytes("a") }),
      publisher.publish({ name: full.name, payload: bytes("b") }),
      publisher.publish({ name: missing, payload: bytes("c") }),
      publisher.publish({ name: other.name, payload: bytes("d") }),
      publisher.publish({ name: full.name, payload: bytes("e") }),
    ]);

    expect(outcomes.map((o) => o.status)).toEqual([
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
      "rejected",
    ]);
    const reason = (i: number) => (outcomes[i] as PromiseRejectedResult).reason as Error;
    for (const nacked of [1, 4]) {
      expect(isRustStreamError(reason(nacked), "broker-failure")).toBe(true);
      expect(reason(nacked).message).toContain(`routing key "${full.name}" (a nack`);
    }
    expect(isRustStreamError(reason(2), "publish-refused")).toBe(true);
    expect(reason(2).message).toContain(`routing key "${missing}"`);

    // What was confirmed is there, and only that.
    for (const [queue, payload] of [
      [full, "a"],
      [other, "d"],
    ] as const) {
      const subscription = await connected.subscribe(queue);
      const delivery = (await subscription.next()).value;
      expect(text(delivery?.payload)).toBe(payload);
      await delivery?.ack();
      await subscription.close();
    }
  });

  it("many publishes of one turn are each confirmed, in order", async () => {
    const queue = new RabbitQueue(name("many"), { autoDelete: true });
    const connected = await new RabbitBroker({
      url: requireEnv("RABBITMQ_URL"),
      declare: true,
      topology: [queue],
    }).connect();
    open.push(connected);
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const count = 2000;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        publisher.publish({ name: queue.name, payload: bytes(String(i)) }),
      ),
    );
    const subscription = await connected.subscribe(queue);
    for (let i = 0; i < count; i++) {
      const delivery = (await subscription.next()).value;
      expect(text(delivery?.payload)).toBe(String(i));
      await delivery?.ack();
    }
    await subscription.close();
  });
});

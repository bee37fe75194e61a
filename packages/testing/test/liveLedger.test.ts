import {
  type AppDescription,
  type Delivery,
  HeaderMap,
  type OutcomeEvent,
  type RuntimeEvent,
} from "@ruststream/core";
import { describe, expect, it } from "vitest";
import { LiveLedger } from "../src/testApp/liveLedger.js";

// The orders in which a live app's events can come, each checked against what is still owed.

const subscriber = (name: string, source = name) =>
  ({ name, source: { name: source } }) as AppDescription["brokers"][number]["subscribers"][number];

const description = {
  name: "app",
  version: "1",
  brokers: [
    { kind: "redis", subscribers: [subscriber("orders"), subscriber("orders-dlq")] },
    { kind: "redis", subscribers: [subscriber("audit", "orders")] },
  ],
} as unknown as AppDescription;

const bytes = (text: string) => new TextEncoder().encode(text);
const delivery = (name: string, text: string) =>
  ({ name, payload: bytes(text), headers: new HeaderMap() }) as unknown as Delivery;

function ledger(): LiveLedger {
  const l = new LiveLedger(description);
  for (const broker of ["redis", "redis-2"]) {
    l.observe({ type: "broker-connection", broker, kind: "redis", state: "connected" });
  }
  return l;
}

const publish = (name: string, text: string, extra: Partial<RuntimeEvent> = {}): RuntimeEvent =>
  ({
    type: "publish",
    name,
    broker: "redis",
    message: { name, payload: bytes(text) },
    purpose: "app",
    ok: true,
    ...extra,
  }) as RuntimeEvent;

const outcome = (sub: string, d: Delivery, kind: OutcomeEvent["outcome"]): RuntimeEvent =>
  ({ type: "outcome", subscriber: sub, delivery: d, outcome: kind }) as unknown as RuntimeEvent;

const deadLetter = (sub: string, d: Delivery, movedBy: "runtime" | "broker"): RuntimeEvent =>
  ({
    type: "dead-letter",
    subscriber: sub,
    delivery: d,
    destination: "orders-dlq",
    reason: "max-attempts",
    movedBy,
  }) as RuntimeEvent;

describe("LiveLedger", () => {
  it("owes a publish to every subscriber reading its name on that broker, and no other", () => {
    const l = ledger();
    l.observe(publish("orders", "a"));
    expect(l.describeOutstanding()).toBe("orders: 1");
    l.observe(publish("orders", "b", { broker: "redis-2" } as Partial<RuntimeEvent>));
    expect(l.describeOutstanding()).toBe("orders: 1, audit: 1");
    l.observe(publish("elsewhere", "c"));
    expect(l.outstanding).toBe(2);
  });

  it("holds an outcome that came before its publish against that publish", () => {
    const l = ledger();
    l.observe(outcome("orders", delivery("orders", "req"), "ack"));
    expect(l.outstanding).toBe(0);
    l.observe(publish("orders", "req", { purpose: "request" } as Partial<RuntimeEvent>));
    expect(l.outstanding).toBe(0);
  });

  it("tells messages apart by payload, not by count", () => {
    const l = ledger();
    // Something outside the app published "x"; the app's own "y" is still owed after x settles.
    l.observe(outcome("orders", delivery("orders", "x"), "ack"));
    l.observe(publish("orders", "y"));
    expect(l.describeOutstanding()).toBe("orders: 1");
  });

  it("owes nothing for a message the app did not publish, its retries included", () => {
    // A shared subscription: this app retried it once, another consumer finished it.
    const l = ledger();
    l.observe(outcome("orders", delivery("orders", "theirs"), "retry"));
    l.observe(outcome("orders", delivery("orders", "theirs"), "retry-after"));
    expect(l.outstanding).toBe(0);
  });

  it("owes a retry whose outcome came before its publish until its final outcome", () => {
    const l = ledger();
    l.observe(outcome("orders", delivery("orders", "r"), "retry"));
    l.observe(publish("orders", "r"));
    expect(l.describeOutstanding()).toBe("orders: 1");
    l.observe(outcome("orders", delivery("orders", "r"), "ack"));
    expect(l.outstanding).toBe(0);
  });

  it("keeps an immediate retry owed, its copy not counted twice, and parks a delayed one", () => {
    const l = ledger();
    l.observe(publish("orders", "m"));
    l.observe(outcome("orders", delivery("orders", "m"), "retry"));
    l.observe(publish("orders", "m", { purpose: "retry-copy" } as Partial<RuntimeEvent>));
    expect(l.outstanding).toBe(1);
    l.observe(outcome("orders", delivery("orders", "m"), "retry-after"));
    expect(l.outstanding).toBe(0);
    // Back after its delay, and settled for good.
    l.observe(outcome("orders", delivery("orders", "m"), "ack"));
    expect(l.outstanding).toBe(0);
    l.observe(publish("orders", "n"));
    expect(l.outstanding).toBe(1);
  });

  it("owes the runtime's dead letter from its decision, and forgives it when its publish fails", () => {
    const l = ledger();
    const d = delivery("orders", "poison");
    l.observe(publish("orders", "poison"));
    l.observe(deadLetter("orders", d, "runtime"));
    l.observe(outcome("orders", d, "dead-letter"));
    expect(l.describeOutstanding()).toBe("orders-dlq: 1");
    l.observe(publish("orders-dlq", "poison", { purpose: "dead-letter" } as Partial<RuntimeEvent>));
    expect(l.describeOutstanding()).toBe("orders-dlq: 1");
    l.observe(
      publish("orders-dlq", "poison", {
        purpose: "dead-letter",
        ok: false,
      } as Partial<RuntimeEvent>),
    );
    expect(l.outstanding).toBe(0);
  });

  it("ends a retry the broker moves to its dead letter, reported before or after the outcome", () => {
    for (const order of ["move first", "outcome first"] as const) {
      const l = ledger();
      const d = delivery("orders", "capped");
      l.observe(publish("orders", "capped"));
      if (order === "move first") {
        l.observe(deadLetter("orders", d, "broker"));
        l.observe(outcome("orders", d, "retry"));
      } else {
        l.observe(outcome("orders", d, "retry-after"));
        l.observe(deadLetter("orders", d, "broker"));
      }
      expect(l.describeOutstanding(), order).toBe("orders-dlq: 1");
      l.observe(outcome("orders-dlq", delivery("orders-dlq", "capped"), "ack"));
      expect(l.outstanding, order).toBe(0);
    }
  });
});

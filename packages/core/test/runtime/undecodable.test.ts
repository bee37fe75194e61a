import { describe, expect, test } from "vitest";
import {
  ack,
  type DecodeFailureEvent,
  type DecodePolicy,
  type Outcome,
  RustStream,
  readDeadLetterOrigin,
  undecodable,
} from "../../src/index.js";
import { type Harness, MemoryBroker, startInProcess } from "./harness.js";

// A handler's `undecodable(error)` is settled by the subscriber's decode policy exactly as a
// payload the runtime's own decoding refused: the same event, dead-letter reason and stop.

const refused = new Error("the order has no id");

function refusingApp(
  calls: unknown[],
  options: { deadLetter?: boolean; decode?: DecodePolicy; async?: boolean },
) {
  return new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
    const subscriber = b.subscriber("orders");
    if (options.deadLetter === true) subscriber.deadLetter("orders-dlq");
    if (options.decode !== undefined) subscriber.onFailure({ decode: options.decode });
    subscriber.handle((message: unknown) => {
      calls.push(message);
      const outcome = undecodable(refused);
      return options.async === true ? Promise.resolve(outcome) : outcome;
    });
  });
}

function decodeFailures(h: Harness): DecodeFailureEvent[] {
  return h.events.filter((e): e is DecodeFailureEvent => e.type === "decode-failure");
}

describe("a handler's undecodable outcome", () => {
  test.each([
    ["returned", false],
    ["resolved", true],
  ])("%s under fail-fast stops the app with its error, the delivery left open", async (_, async) => {
    const calls: unknown[] = [];
    const app = refusingApp(calls, { deadLetter: true, decode: "fail-fast", async });
    const h = await startInProcess(app);
    await h.publish("orders", { sku: "a" });
    const report = await h.running.stopped;
    expect(report.failed).toBe(true);
    expect(report.failure).toBe(refused);
    expect(h.running.state).toBe("stopped");
    expect(calls).toEqual([{ sku: "a" }]);
    expect(h.published("orders-dlq")).toEqual([]);
    expect(decodeFailures(h).map((e) => [e.subscriber, e.error])).toEqual([["orders", refused]]);
    expect(h.outcomes("orders").map((e) => [e.outcome, e.handled, e.error])).toEqual([
      ["left-open", true, refused],
    ]);
  });

  test("by default, with a dead letter declared: dead-lettered with reason decode, never retried", async () => {
    const calls: unknown[] = [];
    const h = await startInProcess(refusingApp(calls, { deadLetter: true }));
    await h.publish("orders", { sku: "b" });
    expect(calls).toEqual([{ sku: "b" }]);
    const dead = h.published("orders-dlq");
    expect(dead).toHaveLength(1);
    expect(readDeadLetterOrigin(dead[0]!.headers)?.reason).toBe("decode");
    expect(new TextDecoder().decode(dead[0]!.payload)).toBe('{"sku":"b"}');
    expect(decodeFailures(h).map((e) => e.error)).toEqual([refused]);
    const [event] = h.outcomes("orders");
    expect(event).toMatchObject({
      outcome: "dead-letter",
      handled: true,
      message: { sku: "b" },
      error: refused,
    });
    // The handler's count came back down: the app is idle, nothing in a handler.
    expect(h.running.inFlight).toBe(0);
    expect(h.running.state).toBe("ready");
    await h.running.stop();
  });

  test.each([
    ["by default without a dead letter", { deadLetter: false }],
    ["with decode: 'drop' over a declared dead letter", { deadLetter: true, decode: "drop" }],
  ] as const)("%s: dropped, never retried", async (_, options) => {
    const calls: unknown[] = [];
    const h = await startInProcess(refusingApp(calls, options));
    await h.publish("orders", { sku: "c" });
    expect(calls).toEqual([{ sku: "c" }]);
    expect(h.published("orders-dlq")).toEqual([]);
    expect(decodeFailures(h).map((e) => e.error)).toEqual([refused]);
    expect(h.outcomes("orders").map((e) => [e.outcome, e.handled])).toEqual([["drop", true]]);
    expect(h.running.state).toBe("ready");
    await h.running.stop();
  });

  test("from a batch handler: only the refused message goes by the decode policy", async () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .deadLetter("orders-dlq")
        .batch(2)
        .handle((messages: readonly unknown[]): Outcome[] =>
          messages.map((m) => ((m as { ok: boolean }).ok ? ack() : undecodable(refused))),
        );
    });
    const h = await startInProcess(app);
    await h.publish("orders", { ok: true });
    await h.publish("orders", { ok: false });
    const settled = h.outcomes("orders").map((e) => [e.message, e.outcome]);
    expect(settled).toContainEqual([{ ok: false }, "dead-letter"]);
    expect(settled.filter(([, outcome]) => outcome === "dead-letter")).toHaveLength(1);
    expect(h.published("orders-dlq").map((m) => new TextDecoder().decode(m.payload))).toEqual([
      '{"ok":false}',
    ]);
    expect(decodeFailures(h).map((e) => e.error)).toEqual([refused]);
    await h.running.stop();
  });
});

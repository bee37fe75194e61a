import { describe, expect, test } from "vitest";
import {
  headerNames,
  MemoryBroker,
  MemoryQueue,
  RustStream,
  RustStreamError,
  readDeadLetterOrigin,
  readRetryCount,
  retry,
  retryAfter,
} from "../../src/index.js";
import { CopyOnlyBroker } from "./copyOnlyBroker.js";
import { json, startInProcess } from "./harness.js";

function failingApp(broker: MemoryBroker | CopyOnlyBroker, how: "throw" | "retry" | "retryAfter") {
  return new RustStream({ name: "test", version: "0.0.0" }).broker(broker, (b) => {
    b.subscriber("orders")
      .maxAttempts(4)
      .deadLetter("orders-dlq")
      .handle(() => {
        if (how === "retry") return retry();
        if (how === "retryAfter") return retryAfter(50);
        throw new Error("always fails");
      });
  });
}

describe("a delivery already past its cap", () => {
  // A consumer that died mid-handler on the last attempt leaves the message unsettled; the broker
  // hands it back with one more delivery counted. It has had every attempt: no handler run again.
  test.each([
    ["with a dead letter: dead-lettered unhandled", true],
    ["without one: dropped unhandled", false],
  ] as const)("%s", async (_, withDeadLetter) => {
    let calls = 0;
    const app = new RustStream({ name: "test", version: "0.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        const s = b.subscriber("orders").maxAttempts(3);
        (withDeadLetter ? s.deadLetter("orders-dlq") : s).handle(() => {
          calls++;
        });
      },
    );
    const h = await startInProcess(app);
    // Three deliveries before this one, as a copy's retry count says.
    await h.publishRaw("orders", '{"id":1}', { [headerNames.retryCount]: "3" });
    await h.publishRaw("orders", '{"id":2}', { [headerNames.retryCount]: "2" });
    expect(calls).toBe(1); // only id 2, on its third and last attempt
    const outcomes = h.outcomes("orders");
    expect(outcomes.map((e) => [e.attempt, e.outcome])).toEqual([
      [4, withDeadLetter ? "dead-letter" : "drop"],
      [3, "ack"],
    ]);
    const reasons = h.published("orders-dlq").map((m) => readDeadLetterOrigin(m.headers)?.reason);
    expect(reasons).toEqual(withDeadLetter ? ["max-attempts"] : []);
    await h.running.stop();
  });

  // The broker keeps the cap there and its own count never passes it, but a copy's retry count can
  // (a wait queue's copy the broker counts afresh): the drop the runtime gives it up with is the
  // broker's move, reported as the one dead letter.
  test("on a source whose broker moves failing messages: moved by the broker unhandled", async () => {
    let calls = 0;
    const app = new RustStream({ name: "test", version: "0.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber(new MemoryQueue("orders"))
          .maxAttempts(3)
          .deadLetter("orders-dlq")
          .handle(() => {
            calls++;
          });
      },
    );
    const h = await startInProcess(app);
    await h.publishRaw("orders", '{"id":1}', { [headerNames.retryCount]: "3" });
    await h.publishRaw("orders", '{"id":2}', { [headerNames.retryCount]: "2" });
    expect(calls).toBe(1);
    expect(h.outcomes("orders").map((e) => [e.attempt, e.outcome, e.handled])).toEqual([
      [4, "dead-letter", false],
      [3, "ack", true],
    ]);
    expect(
      h.events.flatMap((e) =>
        e.type === "dead-letter" ? [`${e.movedBy} ${e.destination} ${e.reason}`] : [],
      ),
    ).toEqual(["broker orders-dlq max-attempts"]);
    expect(h.published("orders-dlq").map((m) => new TextDecoder().decode(m.payload))).toEqual([
      '{"id":1}',
    ]);
    await h.running.stop();
  });
});

describe("maxAttempts + deadLetter: exactly n deliveries, whichever way the message came back", () => {
  test.each([
    ["requeue (retry())", () => new MemoryBroker(), "retry"],
    ["delayed requeue (thrown error, broker's nackAfter)", () => new MemoryBroker(), "throw"],
    ["republished copy (retry(), broker cannot requeue)", () => new CopyOnlyBroker(), "retry"],
    ["delayed copy (thrown error, broker cannot requeue)", () => new CopyOnlyBroker(), "throw"],
    [
      "delayed copy (retryAfter(), broker cannot requeue)",
      () => new CopyOnlyBroker(),
      "retryAfter",
    ],
  ] as const)("%s", async (_, makeBroker, how) => {
    const h = await startInProcess(failingApp(makeBroker(), how));
    await h.publish("orders", { id: 1 });
    // Backoff is 100, 200, 400 ms; move time well past each step.
    for (let i = 0; i < 4; i++) await h.advance(1000);
    const outcomes = h.outcomes("orders");
    expect(outcomes.map((e) => e.attempt)).toEqual([1, 2, 3, 4]);
    expect(outcomes.at(-1)!.outcome).toBe("dead-letter");
    const dead = h.published("orders-dlq");
    expect(dead).toHaveLength(1);
    expect(json(dead[0]!.payload)).toEqual({ id: 1 });
    expect(readDeadLetterOrigin(dead[0]!.headers)).toMatchObject({
      source: "orders",
      reason: "max-attempts",
    });
    // The dead letter says how many deliveries were made, however they came back.
    expect(readRetryCount(dead[0]!.headers)).toBe(4);
    // A broker that cannot requeue gets copies, each carrying the count of deliveries before it;
    // one that can brings the message itself back, publishing nothing.
    const copies = h.published("orders").slice(1);
    expect(copies.map((m) => readRetryCount(m.headers))).toEqual(
      makeBroker() instanceof CopyOnlyBroker ? [1, 2, 3] : [],
    );
    await h.running.stop();
  });

  test("a thrown error backs off: nothing comes back before the delay", async () => {
    const h = await startInProcess(failingApp(new MemoryBroker(), "throw"));
    await h.publish("orders", 1);
    await h.advance(99);
    expect(h.outcomes("orders")).toHaveLength(1);
    await h.advance(1);
    expect(h.outcomes("orders")).toHaveLength(2);
    await h.advance(199);
    expect(h.outcomes("orders")).toHaveLength(2);
    await h.advance(1);
    expect(h.outcomes("orders")).toHaveLength(3);
    await h.running.stop();
  });

  test("without a dead letter, an exhausted message is dropped", async () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("x")
        .maxAttempts(2)
        .handle(() => retry());
    });
    const h = await startInProcess(app);
    await h.publish("x", 1);
    expect(h.outcomes("x").map((e) => e.outcome)).toEqual(["retry", "drop"]);
    await h.running.stop();
  });

  test("a copy that arrives with a retry count continues the count", async () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("x")
        .maxAttempts(3)
        .deadLetter("x-dlq")
        .handle(() => retry());
    });
    const h = await startInProcess(app);
    await h.publishRaw("x", "1", { [headerNames.retryCount]: "2" });
    expect(h.outcomes("x").map((e) => [e.attempt, e.outcome])).toEqual([[3, "dead-letter"]]);
    expect(readRetryCount(h.published("x-dlq")[0]!.headers)).toBe(3);
    await h.running.stop();
  });
});

describe("a subscriber on a dead letter counts its own attempts", () => {
  // The copy keeps every delivery it had in its retry count (RustStream's dead letters say so), and
  // the count it was moved with beside it: the dead letter's subscriber starts again at attempt 1,
  // where it once started past a cap of 3 and dropped the message before its handler ran.
  test.each([
    ["a broker that requeues", () => new MemoryBroker()],
    ["a broker that cannot (retries are copies)", () => new CopyOnlyBroker()],
  ] as const)("%s", async (_, makeBroker) => {
    const seen: [string, number][] = [];
    const app = new RustStream({ name: "t", version: "0" }).broker(makeBroker(), (b) => {
      b.subscriber("orders")
        .maxAttempts(3)
        .deadLetter("orders-dlq")
        .handle((_message, ctx) => {
          seen.push(["orders", ctx.attempt]);
          return retry();
        });
      b.subscriber("orders-dlq")
        .maxAttempts(3)
        .deadLetter("orders-parked")
        .handle((_message, ctx) => {
          seen.push(["orders-dlq", ctx.attempt]);
          return retry();
        });
    });
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1 });
    expect(seen).toEqual([
      ["orders", 1],
      ["orders", 2],
      ["orders", 3],
      ["orders-dlq", 1],
      ["orders-dlq", 2],
      ["orders-dlq", 3],
    ]);
    // Each dead letter still carries every delivery the message had.
    expect(readRetryCount(h.published("orders-dlq")[0]!.headers)).toBe(3);
    const parked = h.published("orders-parked");
    expect(parked.map((m) => readRetryCount(m.headers))).toEqual([6]);
    expect(readDeadLetterOrigin(parked[0]!.headers)?.source).toBe("orders-dlq");
    await h.running.stop();
  });
});

describe("failure policies", () => {
  test("decode failure: dead letter when declared, never retried", async () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("x")
        .deadLetter("x-dlq")
        .handle(() => {});
    });
    const h = await startInProcess(app);
    await h.publishRaw("x", "{not json");
    const [event] = h.outcomes("x");
    expect(event).toMatchObject({ outcome: "dead-letter", handled: false });
    const [dead] = h.published("x-dlq");
    expect(readDeadLetterOrigin(dead!.headers)?.reason).toBe("decode");
    // One delivery made, and the dead letter says so, as the original framework writes it.
    expect(dead!.headers.getString(headerNames.retryCount)).toBe("1");
    await h.running.stop();
  });

  test("error: 'drop' and decode: 'drop' override the defaults", async () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("x")
        .deadLetter("x-dlq")
        .onFailure({ error: "drop", decode: "drop" })
        .handle(() => {
          throw new Error("no");
        });
    });
    const h = await startInProcess(app);
    await h.publish("x", 1);
    await h.publishRaw("x", "nope");
    expect(h.outcomes("x").map((e) => e.outcome)).toEqual(["drop", "drop"]);
    expect(h.published("x-dlq")).toEqual([]);
    await h.running.stop();
  });

  test("a message the dead letter refuses before sending is dropped, not brought back for ever", async () => {
    const calls: number[] = [];
    const app = new RustStream({ name: "t", version: "0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber("x")
          .maxAttempts(2)
          .deadLetter("x-dlq")
          .handle((_m, ctx) => {
            calls.push(ctx.attempt);
            throw new Error("always fails");
          });
      })
      // As a broker refuses a message over its size limit (one a producer with a larger limit wrote).
      .use({
        publish: (message, next) =>
          message.name === "x-dlq"
            ? Promise.reject(new RustStreamError("publish-refused", "too big for this broker"))
            : next(message),
      });
    const h = await startInProcess(app);
    await h.publish("x", 1);
    for (let i = 0; i < 5; i++) await h.advance(20_000);
    expect(calls).toEqual([1, 2]);
    expect(h.published("x-dlq")).toEqual([]);
    await h.running.stop();
  });

  test("fail-fast stops the app and reports the failure", async () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("x")
        .onFailure({ error: "fail-fast" })
        .handle(() => {
          throw new Error("bug");
        });
    });
    const h = await startInProcess(app);
    await h.publish("x", 1);
    const report = await h.running.stopped;
    expect(report.failed).toBe(true);
    expect((report.failure as Error).message).toBe("bug");
    expect(h.running.state).toBe("stopped");
  });
});

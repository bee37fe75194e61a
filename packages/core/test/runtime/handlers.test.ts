import { describe, expect, test } from "vitest";
import {
  deadLetter,
  drop,
  headerNames,
  MemoryBroker,
  MemoryQueue,
  out,
  RustStream,
  readDeadLetterOrigin,
  retry,
} from "../../src/index.js";
import { json, startInProcess } from "./harness.js";

function app() {
  return new RustStream({ name: "test", version: "0.0.0" });
}

describe("handlers", () => {
  test("a handler that returns nothing acks, once per message, in order", async () => {
    const seen: unknown[] = [];
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("orders").handle((message) => {
        seen.push(message);
      });
    });
    const h = await startInProcess(a);
    await h.publish("orders", { id: 1 });
    await h.publish("orders", { id: 2 });
    expect(seen).toEqual([{ id: 1 }, { id: 2 }]);
    expect(h.outcomes("orders").map((e) => e.outcome)).toEqual(["ack", "ack"]);
    await h.running.stop();
  });

  test("a reply goes to the declared destination with the content type and correlation id", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .reply("receipts")
        .handle(async (order) => ({ receipt: (order as { id: number }).id }));
    });
    const h = await startInProcess(a);
    await h.publishRaw("orders", JSON.stringify({ id: 7 }), { [headerNames.correlationId]: "c-1" });
    const [receipt] = h.published("receipts");
    expect(json(receipt!.payload)).toEqual({ receipt: 7 });
    expect(receipt!.headers.getString(headerNames.correlationId)).toBe("c-1");
    expect(receipt!.headers.getString(headerNames.contentType)).toBe("application/json");
    await h.running.stop();
  });

  test("request/reply: reply() without a destination answers reply-to", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("double")
        .reply()
        .handle((n) => (n as number) * 2);
    });
    const h = await startInProcess(a);
    const answer = h.running.request("double", 21, { timeoutMs: 1000 });
    await h.quiet();
    expect(await answer).toBe(42);
    await h.running.stop();
  });

  test("outcomes: drop, retry, dead-letter with a reason", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("a").handle(() => drop());
      b.subscriber("b")
        .maxAttempts(2)
        .handle(() => retry());
      b.subscriber("c")
        .deadLetter("c-dlq")
        .handle(() => deadLetter("not today"));
    });
    const h = await startInProcess(a);
    await h.publish("a", 1);
    await h.publish("b", 2);
    await h.publish("c", 3);
    expect(h.outcomes("a").map((e) => e.outcome)).toEqual(["drop"]);
    // retry() requeues at once; the second delivery reaches the cap and, with no dead letter, drops.
    expect(h.outcomes("b").map((e) => [e.outcome, e.attempt])).toEqual([
      ["retry", 1],
      ["drop", 2],
    ]);
    const [dead] = h.published("c-dlq");
    expect(json(dead!.payload)).toBe(3);
    expect(readDeadLetterOrigin(dead!.headers)).toMatchObject({ source: "c", reason: "not today" });
    await h.running.stop();
  });

  test("publishers declared with publishes() are injected as ctx.out", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .publishes({ audit: out<{ seen: number }>("audit"), raw: "raw" })
        .handle(async (order, ctx) => {
          await ctx.out.audit.publish({ seen: order as number }, { headers: { "x-a": "1" } });
          await ctx.out.raw.publish("anything");
        });
    });
    const h = await startInProcess(a);
    await h.publish("orders", 5);
    expect(h.published("audit").map((m) => json(m.payload))).toEqual([{ seen: 5 }]);
    expect(h.published("audit")[0]!.headers.getString("x-a")).toBe("1");
    expect(h.published("raw").map((m) => json(m.payload))).toEqual(["anything"]);
    await h.running.stop();
  });

  test("consume middleware wraps handlers; publish middleware sees every publish", async () => {
    const order: string[] = [];
    const a = app()
      .use({
        consume: (message, ctx, next) => {
          order.push(`before ${String(message)} on ${ctx.name}`);
          const result = next();
          order.push("after");
          return result;
        },
        publish: (message, next) => {
          const headers = message.headers?.clone();
          headers?.set("x-stamped", "yes");
          return next({ ...message, ...(headers === undefined ? {} : { headers }) });
        },
      })
      .use({ consume: (message, _ctx, next) => (message === "skip" ? drop() : next()) })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber("in")
          .reply("out")
          .handle((m) => {
            order.push("handler");
            return m;
          });
      });
    const h = await startInProcess(a);
    await h.publish("in", "x");
    await h.publish("in", "skip");
    expect(order).toEqual(["before x on in", "handler", "after", "before skip on in", "after"]);
    expect(h.published("out").map((m) => m.headers.getString("x-stamped"))).toEqual(["yes"]);
    expect(h.outcomes("in").map((e) => e.outcome)).toEqual(["ack", "drop"]);
    await h.running.stop();
  });

  test("observers get outcome, publish and dead-letter events", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("in")
        .reply("out")
        .deadLetter("dlq")
        .handle((m) => (m === 2 ? deadLetter("two") : m));
    });
    const h = await startInProcess(a);
    await h.publish("in", 1);
    await h.publish("in", 2);
    const types = h.events.map((e) => (e.type === "publish" ? `publish ${e.purpose}` : e.type));
    expect(types).toEqual([
      "app-state",
      "broker-connection",
      "subscription",
      "app-state",
      "publish reply",
      "outcome",
      "dead-letter",
      "outcome",
      "publish dead-letter",
    ]);
    await h.running.stop();
  });

  test("a broker-moved source gets the cap and the dead letter, and moves the message itself", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber(new MemoryQueue("jobs"))
        .maxAttempts(3)
        .deadLetter("jobs-dlq")
        .handle(() => {
          throw new Error("always");
        });
    });
    const h = await startInProcess(a);
    await h.publish("jobs", "j");
    expect(h.outcomes("jobs").map((e) => e.attempt)).toEqual([1, 2, 3]);
    const [dead] = h.published("jobs-dlq");
    expect(readDeadLetterOrigin(dead!.headers)).toMatchObject({ source: "jobs" });
    await h.running.stop();
  });
});

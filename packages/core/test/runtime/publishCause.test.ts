import { describe, expect, test } from "vitest";
import {
  type Delivery,
  HeaderMap,
  headerNames,
  MemoryBroker,
  MemoryTopic,
  type OutgoingMessage,
  type PublishEvent,
  RustStream,
  reply,
  retry,
} from "../../src/index.js";
import { CopyOnlyBroker } from "./copyOnlyBroker.js";
import { startInProcess } from "./harness.js";

// What the runtime tells a publisher about each message it publishes for a delivery: the delivery
// itself (the cause), the publish options a handler gave, and the delivery's trace context.

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const encoder = new TextEncoder();

/** Publish middleware that records each message and strips the options the memory broker refuses. */
function recorder() {
  const seen: OutgoingMessage[] = [];
  return {
    seen,
    middleware: {
      publish: (message: OutgoingMessage, next: (m: OutgoingMessage) => Promise<unknown>) => {
        seen.push(message);
        const { options: _broker, ...rest } = message;
        return next(rest) as ReturnType<typeof next> & Promise<never>;
      },
    },
  };
}

describe("the cause of a publish", () => {
  test("a reply, a ctx.out publish, a retry copy and a dead letter each name their delivery", async () => {
    const { seen, middleware } = recorder();
    const handled: Delivery[] = [];
    const app = new RustStream({ name: "c", version: "0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber(new MemoryTopic("orders", { group: "g" }))
          .reply("receipts")
          .publishes({ audit: "audit" })
          .handle(async (order, ctx) => {
            handled.push(ctx.delivery);
            await ctx.out.audit.publish({ seen: order });
            return { ok: true };
          });
        b.subscriber(new MemoryTopic("flaky", { group: "g" }))
          .maxAttempts(2)
          .deadLetter("flaky-dlq")
          .handle((_m, ctx) => {
            handled.push(ctx.delivery);
            throw new Error("always");
          });
      })
      .use(middleware);
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1 });
    await h.publish("flaky", { id: 2 });
    await h.advance(60_000);
    await h.quiet();
    const byName = (name: string) => seen.filter((m) => m.name === name);
    const [order, flaky1, flaky2] = handled;
    expect(byName("receipts").map((m) => m.cause)).toEqual([order]);
    expect(byName("audit").map((m) => m.cause)).toEqual([order]);
    // The memory broker requeues (no copy); the second attempt is given up to the dead letter.
    expect(flaky1).toBeDefined();
    expect(byName("flaky-dlq").map((m) => m.cause)).toEqual([flaky2]);
    // Observers see it too, on the publish event.
    const events = h.events.filter((e): e is PublishEvent => e.type === "publish");
    expect(events.find((e) => e.name === "receipts")?.message.cause).toBe(order);
    await h.running.stop();
  });

  test("a retry copy, now or delayed, names the delivery it copies", async () => {
    const { seen, middleware } = recorder();
    const handled: Delivery[] = [];
    // A broker that cannot requeue: the runtime republishes copies to the redelivery address.
    const app = new RustStream({ name: "c", version: "0" })
      .broker(new CopyOnlyBroker(), (b) => {
        b.subscriber("jobs")
          .maxAttempts(3)
          .handle((_m, ctx) => {
            handled.push(ctx.delivery);
            if (handled.length === 1) return retry();
            if (handled.length === 2) throw new Error("later");
          });
      })
      .use(middleware);
    const h = await startInProcess(app);
    await h.publish("jobs", { id: 3 });
    for (let i = 0; i < 3; i++) await h.advance(1000);
    const copies = seen.filter((m) => m.name === "jobs");
    expect(handled).toHaveLength(3);
    expect(copies.map((m) => m.cause)).toEqual([handled[0], handled[1]]);
    expect(copies.map((m) => m.headers?.getString(headerNames.retryCount))).toEqual(["1", "2"]);
    await h.running.stop();
  });
});

describe("options on runtime publishes", () => {
  test("reply(value, options) and ctx.out.x.publish(value, options) carry them to the publisher", async () => {
    const { seen, middleware } = recorder();
    const app = new RustStream({ name: "o", version: "0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber<{ sku: string }>("orders")
          .reply<{ ok: boolean }>("receipts")
          .publishes({ audit: "audit" })
          .handle(async (order, ctx) => {
            await ctx.out.audit.publish(order, {
              partitionKey: order.sku,
              headers: { "x-audit": "1" },
            });
            return reply({ ok: true }, { partitionKey: order.sku, headers: { "x-reply": "1" } });
          });
      })
      .use(middleware);
    const h = await startInProcess(app);
    await h.publish("orders", { sku: "apple" });
    const [receipt] = h.published("receipts");
    if (receipt === undefined) throw new Error("no receipt");
    expect(JSON.parse(new TextDecoder().decode(receipt.payload))).toEqual({ ok: true });
    expect(receipt.partitionKey).toEqual(encoder.encode("apple"));
    expect(receipt.headers.getString("x-reply")).toBe("1");
    expect(receipt.headers.getString(headerNames.contentType)).toBe("application/json");
    const [audit] = h.published("audit");
    expect(audit?.partitionKey).toEqual(encoder.encode("apple"));
    expect(audit?.headers.getString("x-audit")).toBe("1");
    expect(seen.map((m) => m.name).sort()).toEqual(["audit", "receipts"]);
    await h.running.stop();
  });

  test("a broker's own options reach its publisher, and one it cannot honour fails the publish", async () => {
    const { seen, middleware } = recorder();
    const app = new RustStream({ name: "o", version: "0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber("orders").handle(async () => {});
      })
      .use(middleware);
    const h = await startInProcess(app);
    // Through the running app, whose options the chosen broker checks when it publishes.
    await h.running.publish("audit", { n: 1 }, { options: { partition: 3 } });
    expect(seen.at(-1)?.options).toEqual({ partition: 3 });
    // Without the middleware that strips them, the memory broker refuses options it has none of.
    const bare = new RustStream({ name: "o", version: "0" }).broker(new MemoryBroker(), () => {});
    const started = await startInProcess(bare);
    await expect(
      started.running.publish("audit", { n: 1 }, { options: { partition: 3 } }),
    ).rejects.toThrow(/no per-message publish options/);
    await started.running.stop();
    await h.running.stop();
  });
});

describe("trace context", () => {
  test("traceparent and tracestate of a delivery are carried onto its reply and ctx.out publishes", async () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .reply("receipts")
        .publishes({ audit: "audit", own: "own" })
        .handle(async (_m, ctx) => {
          await ctx.out.audit.publish({});
          // A publish that sets its own trace context keeps it.
          await ctx.out.own.publish({}, { headers: { traceparent: "00-own-01" } });
          return { ok: true };
        });
    });
    const h = await startInProcess(app);
    await h.publishRaw("orders", "{}", { traceparent, tracestate: "congo=t61rcWkgMzE" });
    for (const name of ["receipts", "audit"]) {
      const [message] = h.published(name);
      expect(message?.headers.getString(headerNames.traceparent), name).toBe(traceparent);
      expect(message?.headers.getString(headerNames.tracestate), name).toBe("congo=t61rcWkgMzE");
    }
    const [own] = h.published("own");
    expect(own?.headers.getString(headerNames.traceparent)).toBe("00-own-01");
    expect(own?.headers.getString(headerNames.tracestate)).toBe("congo=t61rcWkgMzE");
    // A delivery without trace context gives its reply none.
    await h.publishRaw("orders", "{}");
    const second = h.published("receipts")[1];
    expect(second?.headers.has(headerNames.traceparent)).toBe(false);
    expect(new HeaderMap(second?.headers).has(headerNames.tracestate)).toBe(false);
    await h.running.stop();
  });
});

describe("what publish middleware is told", () => {
  test("each publish names its broker and purpose; a request passes through too, resolving with its reply", async () => {
    const told: { name: string; broker: string; purpose: string }[] = [];
    const app = new RustStream({ name: "c", version: "0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber<{ sku: string }>("prices")
          .reply()
          .handle((ask) => ({ sku: ask.sku, cents: 250 }));
        b.subscriber("orders")
          .reply("receipts")
          .publishes({ audit: "audit" })
          .handle(async (order, ctx) => {
            await ctx.out.audit.publish({ seen: order });
            return { ok: true };
          });
      })
      .use({
        publish: (message, next, info) => {
          told.push({ name: message.name, broker: info.broker, purpose: info.purpose });
          const headers = message.headers?.clone() ?? new HeaderMap();
          headers.set("x-through", info.purpose);
          return next({ ...message, headers });
        },
      });
    const h = await startInProcess(app);
    await h.running.publish("orders", { id: 1 });
    const answer = await h.running.request("prices", { sku: "apple" }, { timeoutMs: 1000 });
    await h.quiet();
    expect(answer).toEqual({ sku: "apple", cents: 250 });
    expect(told.filter((t) => t.name !== "prices" && !t.name.startsWith("_"))).toEqual(
      expect.arrayContaining([
        { name: "orders", broker: "memory", purpose: "app" },
        { name: "audit", broker: "memory", purpose: "out" },
        { name: "receipts", broker: "memory", purpose: "reply" },
      ]),
    );
    expect(told.filter((t) => t.name === "prices")).toEqual([
      { name: "prices", broker: "memory", purpose: "request" },
    ]);
    // What the middleware added reached the replier on the request, and the event names the purpose.
    const request = h.events.find(
      (e): e is PublishEvent => e.type === "publish" && e.purpose === "request",
    );
    expect(request).toMatchObject({ name: "prices", ok: true });
    expect(request?.message.headers?.getString("x-through")).toBe("request");
    expect(h.published("prices").map((m) => m.headers.getString("x-through"))).toEqual(["request"]);
    await h.running.stop();
  });
});

describe("the consumer group on a handler's context", () => {
  test("a subscriber in a group sees its name; one in no group sees undefined", async () => {
    const groups: (string | undefined)[] = [];
    const app = new RustStream({ name: "c", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber(new MemoryTopic("orders", { group: "billing" })).handle((_m, ctx) => {
        groups.push(ctx.group);
      });
      b.subscriber("orders")
        .name("orders, alone")
        .handle((_m, ctx) => {
          groups.push(ctx.group);
        });
      b.subscriber(new MemoryTopic("orders", { group: "batching" }))
        .name("orders, in batches")
        .batch(10)
        .handle((_messages, ctx) => {
          groups.push(ctx.group);
        });
    });
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1 });
    await h.quiet();
    expect([...groups].sort()).toEqual(["batching", "billing", undefined].sort());
    await h.running.stop();
  });
});

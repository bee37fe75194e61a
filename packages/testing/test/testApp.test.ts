import {
  deadLetter,
  headerNames,
  MemoryBroker,
  RustStream,
  readDeadLetterOrigin,
  retry,
  retryAfter,
} from "@ruststream/core";
import { afterEach, describe, expect, test } from "vitest";
import { TestApp } from "../src/index.js";

// One module-level app, started test after test, as a service's own tests do.
const broker = new MemoryBroker();
const app = new RustStream({ name: "orders", version: "1.0.0" }).broker(broker, (b) => {
  b.subscriber("orders")
    .reply("receipts")
    .maxAttempts(3)
    .deadLetter("orders-dlq")
    .handle((order) => {
      const { id, qty } = order as { id: number; qty: number };
      if (qty === 0) return deadLetter("empty order");
      if (qty < 0) return retryAfter(1000);
      return { orderId: id };
    });
  b.subscriber("receipts").handle(() => {});
});

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe("TestApp", () => {
  test("publish runs the whole reaction (handler, reply, the reply's subscriber) before it returns", async () => {
    t = await TestApp.start(app);
    await t.publish(
      "orders",
      { id: 1, qty: 2 },
      { headers: { [headerNames.correlationId]: "c1" } },
    );
    t.subscriber("orders").assertCalledOnce().assertCalledWith({ id: 1, qty: 2 });
    t.subscriber("orders").assertOutcomes("ack");
    t.subscriber("receipts").assertCalledOnce().assertCalledWith({ orderId: 1 });
    const [receipt] = t.published("receipts");
    expect(receipt!.value).toEqual({ orderId: 1 });
    expect(receipt!.header(headerNames.correlationId)).toBe("c1");
  });

  test("each start sees only its own run", async () => {
    t = await TestApp.start(app);
    t.subscriber("orders").assertNotCalled();
    expect(t.published("receipts")).toEqual([]);
  });

  test("dead letters carry the origin; decode failures are recorded", async () => {
    t = await TestApp.start(app);
    await t.publish("orders", { id: 2, qty: 0 });
    await t.publishRaw("orders", "{broken");
    t.subscriber("orders").assertCalledOnce().assertLastFailedToDecode();
    expect(t.subscriber("orders").outcomes).toEqual(["dead-letter", "dead-letter"]);
    expect(t.subscriber("orders").decodeFailures).toHaveLength(1);
    const origins = t.published("orders-dlq").map((m) => readDeadLetterOrigin(m.headers)?.reason);
    expect(origins).toEqual(["empty order", "decode"]);
  });

  test("delayed retries wait for the controllable clock", async () => {
    t = await TestApp.start(app);
    await t.publish("orders", { id: 3, qty: -1 });
    t.subscriber("orders").assertCalled(1);
    await t.advance(999);
    t.subscriber("orders").assertCalled(1);
    await t.advance(1);
    t.subscriber("orders").assertCalled(2);
    await t.advance(1000);
    expect(t.subscriber("orders").attempts).toEqual([1, 2, 3]);
    expect(t.subscriber("orders").outcomes).toEqual(["retry-after", "retry-after", "dead-letter"]);
  });

  test("assertions fail with messages that say what happened", async () => {
    t = await TestApp.start(app);
    expect(() => t!.subscriber("orders").assertCalledOnce()).toThrow(
      'subscriber "orders" was called 0 time(s), expected 1',
    );
    expect(() => t!.subscriber("nope")).toThrow(/no subscriber named "nope"/);
    await t.publish("orders", { id: 4, qty: 1 });
    expect(() => t!.subscriber("orders").assertCalledWith({ id: 5 })).toThrow(/never called/);
  });

  test("a reaction that never ends fails with code timeout instead of hanging", async () => {
    const stuck = new RustStream({ name: "stuck", version: "0", shutdownTimeoutMs: 20 }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("in").handle(() => new Promise<void>(() => {}));
      },
    );
    t = await TestApp.start(stuck, { timeoutMs: 100 });
    await expect(t.publish("in", 1)).rejects.toMatchObject({ code: "timeout" });
  });

  test("fail-fast shows in assertRunning", async () => {
    const fragile = new RustStream({ name: "fragile", version: "0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("in")
          .onFailure({ error: "fail-fast" })
          .handle(() => {
            throw new Error("bug");
          });
      },
    );
    t = await TestApp.start(fragile);
    t.assertRunning();
    await t.publish("in", 1);
    expect(() => t!.assertRunning()).toThrow(/not running/);
    expect((await t.stop()).failed).toBe(true);
  });

  test("request/reply through the in-process broker", async () => {
    const echo = new RustStream({ name: "echo", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("echo")
        .reply()
        .handle((m) => ({ echoed: m }));
    });
    t = await TestApp.start(echo);
    expect(await t.request("echo", "hi")).toEqual({ echoed: "hi" });
  });

  test("a request nobody answers rejects with timeout once advance passes it, reported nowhere else", async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      t = await TestApp.start(app);
      const reply = t.request("nobody", "hi", { timeoutMs: 1000 });
      const outcome = reply.catch((error: unknown) => error);
      // The timeout fires inside advance, while request still waits for the reaction to be over.
      await t.advance(1000);
      expect(await outcome).toMatchObject({ code: "timeout" });
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", record);
    }
  });

  test("startLive runs the same body against the broker as it really connects", async () => {
    t = await TestApp.startLive(app);
    await t.publish("orders", { id: 9, qty: 1 });
    // No waiting of the test's own: publish returns once the order and its reply were settled.
    t.subscriber("orders").assertCalledOnce();
    t.subscriber("receipts").assertCalledOnce();
    expect(t.published("receipts").map((m) => m.value)).toEqual([{ orderId: 9 }]);
  }, 20_000);

  test("startLive waits through immediate retries to the dead letter and its reader; a delayed retry waits for advance", async () => {
    const calls: number[] = [];
    const failing = new RustStream({ name: "failing", version: "1.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("jobs")
          .maxAttempts(3)
          .deadLetter("jobs-dlq")
          .handle((job, ctx) => {
            calls.push(ctx.attempt);
            return (job as { delayed: boolean }).delayed ? retryAfter(300) : retry();
          });
        // A dead letter carries its retry count (3): a reader of it needs a higher cap to run at all.
        b.subscriber("jobs-dlq")
          .maxAttempts(10)
          .handle(() => {});
      },
    );
    t = await TestApp.startLive(failing);
    await t.publish("jobs", { delayed: false });
    expect(calls).toEqual([1, 2, 3]);
    expect(t.subscriber("jobs").outcomes).toEqual(["retry", "retry", "dead-letter"]);
    t.subscriber("jobs-dlq").assertCalledOnce();
    // As on the in-process clock, a delayed retry is the test's to wait out.
    calls.length = 0;
    await t.publish("jobs", { delayed: true });
    expect(calls).toEqual([1]);
    await t.advance(300);
    expect(calls).toEqual([1, 2]);
    await t.advance(300);
    expect(calls).toEqual([1, 2, 3]);
    t.subscriber("jobs-dlq").assertCalled(2);
  }, 20_000);

  test("startLive counts a request answered inside the app, whose publish is reported after its reply", async () => {
    const echo = new RustStream({ name: "echo", version: "1.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("echo")
          .reply()
          .handle((value) => ({ echoed: value }));
      },
    );
    t = await TestApp.startLive(echo);
    expect(await t.request("echo", "hi")).toEqual({ echoed: "hi" });
    await t.publish("echo", "again");
    t.subscriber("echo").assertCalled(2);
  }, 20_000);

  test("startLive fails with what is still owed when a message is never settled", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stuck = new RustStream({ name: "stuck", version: "1.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("in")
          .reply("out")
          .handle(() => ({ out: true }));
        b.subscriber("out").handle(() => held);
      },
    );
    t = await TestApp.startLive(stuck, { withinMs: 500 });
    const error = await t.publish("in", {}).catch((e: unknown) => e);
    expect(String(error)).toMatch(/not over after 500 ms: 1 in a handler, still owed out: 1/);
    release();
  }, 20_000);
});

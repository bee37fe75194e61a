import { headerNames, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RedisBroker } from "../src/index.js";
import { eventually, inspect, pendingCount } from "./appSupport.js";

const redis = inspect(requireEnv("REDIS_URL"));
afterAll(() => redis.disconnect());
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe("an app on real Redis streams, through TestApp.startLive", () => {
  it("publish, handler, reply, the reply's subscriber; every entry acknowledged", async () => {
    const orders = uniqueName("orders");
    const receipts = uniqueName("receipts");
    // A bare name is a stream read by the broker's group; none given, it is the app's name, which
    // every replica shares.
    const app = new RustStream({ name: "shop", version: "1.0.0" }).broker(
      new RedisBroker({ url: requireEnv("REDIS_URL") }),
      (b) => {
        b.subscriber(orders)
          .reply(receipts)
          .handle((order) => {
            const { id, qty } = order as { id: number; qty: number };
            return { orderId: id, total: qty * 5 };
          });
        b.subscriber(receipts).handle(() => {});
      },
    );
    t = await TestApp.startLive(app);
    await t.publish(orders, { id: 7, qty: 3 }, { headers: { [headerNames.correlationId]: "c-7" } });
    await t.publish(orders, { id: 8, qty: 1 });
    // A live reaction counts as over after a quiet spell, which a loaded machine can fake: wait for
    // both replies to be handled, then for quiet, and only then count.
    await eventually("both receipts handled", () => t!.subscriber(receipts).calls.length === 2);
    await t.settle();
    t.subscriber(orders).assertCalled(2).assertCalledWith({ id: 7, qty: 3 });
    t.subscriber(orders).assertOutcomes("ack", "ack");
    expect(t.subscriber(orders).attempts).toEqual([1, 1]);
    t.subscriber(receipts).assertCalled(2).assertCalledWith({ orderId: 7, total: 15 });
    const sent = t.published(receipts);
    expect(sent.map((m) => m.value)).toEqual([
      { orderId: 7, total: 15 },
      { orderId: 8, total: 5 },
    ]);
    expect(sent[0]!.header(headerNames.correlationId)).toBe("c-7");
    // On the server: both streams hold what was written, and the group owes nothing.
    expect(await redis.xlen(orders)).toBe(2);
    expect(await redis.xlen(receipts)).toBe(2);
    const groups = (await redis.xinfo("GROUPS", orders)) as unknown[][];
    expect(groups.map((g) => g[1])).toEqual(["shop"]);
    expect(await pendingCount(redis, orders, "shop")).toBe(0);
    expect(await pendingCount(redis, receipts, "shop")).toBe(0);
  });
});

describe("the same app in-process, through TestApp.start", () => {
  it("reads a bare name through the app's name as its group, as on the server", async () => {
    const app = new RustStream({ name: "shop", version: "1.0.0" }).broker(
      new RedisBroker(),
      (b) => {
        b.subscriber("orders").handle(() => {});
      },
    );
    t = await TestApp.start(app);
    await t.publish("orders", { id: 1 });
    t.subscriber("orders").assertCalled(1).assertOutcomes("ack");
  });
});

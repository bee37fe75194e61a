import { ManualClock, MemoryBroker, RustStream, retryAfter } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { afterEach, expect, test } from "vitest";

// In a service this is its app module, imported as it is.
const app = new RustStream({ name: "shop", version: "1.0.0" });
app.broker(new MemoryBroker(), (b) => {
  b.subscriber<{ id: number; qty: number }>("orders")
    .reply<{ orderId: number }>("receipts")
    // Nothing in stock yet: try again in a minute, once.
    .handle((order, ctx) =>
      order.qty > 0 || ctx.attempt > 1 ? { orderId: order.id } : retryAfter(60_000),
    );
  b.subscriber<{ sku: string }>("prices")
    .reply<{ sku: string; price: number }>() // to the request's reply-to
    .handle((query) => ({ sku: query.sku, price: 3 }));
});

let t: TestApp;
afterEach(async () => {
  await t.stop();
});

test("an order gets its receipt", async () => {
  t = await TestApp.start(app);
  await t.publish("orders", { id: 1, qty: 2 }); // returns once the whole reaction is over
  t.subscriber("orders").assertCalledOnce().assertOutcomes("ack");
  expect(t.published("receipts").map((m) => m.value)).toEqual([{ orderId: 1 }]);
});

test("a delayed retry waits for the test's clock", async () => {
  t = await TestApp.start(app, { clock: new ManualClock(0), timeoutMs: 2_000 });
  await t.publish("orders", { id: 2, qty: 0 });
  expect(t.subscriber("orders").attempts).toEqual([1]); // parked until the clock reaches it
  await t.advance(60_000);
  expect(t.subscriber("orders").attempts).toEqual([1, 2]);
  expect(t.published("receipts").map((m) => m.value)).toEqual([{ orderId: 2 }]);
});

test("a payload that is not JSON never reaches the handler", async () => {
  t = await TestApp.start(app);
  await t.publishRaw("orders", "{not json");
  t.subscriber("orders").assertNotCalled().assertLastFailedToDecode();
  expect(t.events.filter((e) => e.type === "decode-failure")).toHaveLength(1);
  t.assertRunning(); // no fail-fast policy stopped the app
});

test("a request gets its reply, and what the harness does not wrap is waited for too", async () => {
  t = await TestApp.start(app);
  expect(await t.request("prices", { sku: "apple" })).toEqual({ sku: "apple", price: 3 });
  await t.running.publish("orders", { id: 3, qty: 1 }); // the running app itself
  await t.settle();
  t.subscriber("orders").assertCalledWith({ id: 3, qty: 1 });
});

// The same calls against the app's real brokers (here the memory broker, so this runs anywhere).
test("live: an order gets its receipt", async () => {
  t = await TestApp.startLive(app, { withinMs: 5_000 });
  await t.publish("orders", { id: 4, qty: 1 }); // returns once the app owes nothing
  t.subscriber("orders").assertCalledOnce();
  expect(t.published("receipts").map((m) => m.value)).toEqual([{ orderId: 4 }]);
});

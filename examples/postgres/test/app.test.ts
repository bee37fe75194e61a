import { TestApp } from "@ruststream/testing";
import { afterEach, expect, test } from "vitest";
import { app, topics } from "../src/app.js";

// In process: no server, and each publish returns once the whole reaction is over, so every
// assertion comes right after it, with no sleeps.
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

test("an order gets a receipt", async () => {
  t = await TestApp.start(app);
  await t.publish(topics.orders, { id: 1, sku: "apple", qty: 2 });
  t.subscriber(topics.orders).assertCalledOnce().assertOutcomes("ack");
  expect(t.published(topics.receipts).map((m) => m.value)).toEqual([{ orderId: 1, total: 6 }]);
});

test("an unknown sku is dropped, with no receipt", async () => {
  t = await TestApp.start(app);
  await t.publish(topics.orders, { id: 2, sku: "durian", qty: 1 });
  t.subscriber(topics.orders).assertOutcomes("drop");
  expect(t.published(topics.receipts)).toEqual([]);
});

test("a malformed order never reaches the handler", async () => {
  t = await TestApp.start(app);
  await t.publish(topics.orders, { id: "two", qty: -1 });
  t.subscriber(topics.orders).assertNotCalled().assertLastFailedToDecode();
  expect(t.published(topics.receipts)).toEqual([]);
});

import { readDeadLetterOrigin } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { afterEach, expect, test } from "vitest";
import { app } from "../src/app.js";

let t: TestApp;
afterEach(async () => {
  await t.stop();
});

test("an order gets a receipt", async () => {
  t = await TestApp.start(app);
  await t.publish("orders", { id: 1, sku: "apple", qty: 2 });
  t.subscriber("orders").assertCalledOnce().assertOutcomes("ack");
  expect(t.published("receipts").map((m) => m.value)).toEqual([
    { orderId: 1, sku: "apple", total: 6 },
  ]);
  t.subscriber("receipts").assertCalledWith({ orderId: 1, sku: "apple", total: 6 });
});

test("a malformed order is dead-lettered without reaching the handler", async () => {
  t = await TestApp.start(app);
  await t.publish("orders", { id: "five", qty: -1 });
  t.subscriber("orders").assertNotCalled().assertLastFailedToDecode();
  const [dead] = t.published("orders-dlq");
  expect(dead!.value).toEqual({ id: "five", qty: -1 });
  expect(readDeadLetterOrigin(dead!.headers)).toMatchObject({ source: "orders", reason: "decode" });
  t.subscriber("orders-dlq").assertCalledOnce();
});

test("invalid JSON is dead-lettered too", async () => {
  t = await TestApp.start(app);
  await t.publishRaw("orders", "{not json");
  expect(t.published("orders-dlq")).toHaveLength(1);
  expect(t.published("receipts")).toEqual([]);
});

test("an unknown sku is dropped: no receipt, no dead letter", async () => {
  t = await TestApp.start(app);
  await t.publish("orders", { id: 3, sku: "durian", qty: 1 });
  t.subscriber("orders").assertOutcomes("drop");
  expect(t.published("receipts")).toEqual([]);
  expect(t.published("orders-dlq")).toEqual([]);
});

test("orders of one sku keep their order across the four lanes", async () => {
  t = await TestApp.start(app);
  for (let id = 1; id <= 6; id++) {
    await t.publish("orders", { id, sku: id % 2 === 0 ? "pear" : "plum", qty: 1 });
  }
  const receipts = t.published("receipts").map((m) => m.value as { orderId: number; sku: string });
  expect(receipts.filter((r) => r.sku === "pear").map((r) => r.orderId)).toEqual([2, 4, 6]);
  expect(receipts.filter((r) => r.sku === "plum").map((r) => r.orderId)).toEqual([1, 3, 5]);
});

import { silentLogger } from "@ruststream/core";
import { app, Order } from "@ruststream/example-orders/src/app.js";
import { expect, test } from "vitest";
import {
  asyncapiDocument,
  asyncapiJson,
  asyncapiYaml,
  messagesWithoutSchema,
} from "../src/index.js";
import { expectMatchesHandlers, payloadFields } from "./handlers.js";
import { validated } from "./validated.js";

test("examples/orders: validated, and it says what the handlers do", async () => {
  const doc = asyncapiDocument(app, { logger: silentLogger });
  const parsed = await validated(asyncapiJson(doc));
  await validated(asyncapiYaml(doc));
  expectMatchesHandlers(parsed, app.describe());

  expect(doc.info).toEqual({ title: "orders", version: "1.0.0" });
  expect(Object.keys(doc.channels ?? {})).toEqual(["orders", "receipts", "orders-dlq"]);
  expect(Object.keys(doc.operations ?? {})).toEqual([
    "receive_orders",
    "send_orders_orders-dlq",
    "receive_receipts",
    "receive_orders-dlq",
  ]);
  // The order's fields, as the zod schema the handler validates with names them.
  expect(payloadFields(parsed, "receive_orders")).toEqual(Object.keys(Order.shape));
  const required = parsed
    .operations()
    .get("receive_orders")
    ?.messages()
    .all()[0]
    ?.payload()
    ?.required();
  expect(required).toEqual(["id", "sku", "qty"]);
  // The reply: the receipts channel, and no send operation of its own.
  const receive = parsed.operations().get("receive_orders");
  expect(receive?.reply()?.channel()?.address()).toBe("receipts");
  expect(
    parsed
      .operations()
      .filterBySend()
      .map((op) => op.channels().all()[0]?.address()),
  ).toEqual(["orders-dlq"]);
  expect(doc.operations?.receive_orders?.["x-ruststream-retry"]).toEqual({
    maxAttempts: 3,
    backoff: { initialMs: 100, maxMs: 10_000 },
    deadLetter: "orders-dlq",
  });
  // The dead-letter channel carries the order as it arrived, and what its reader reads: bytes.
  expect(
    parsed
      .channels()
      .get("orders-dlq")
      ?.messages()
      .all()
      .map((m) => [m.id(), m.contentType()]),
  ).toEqual([
    ["orders-dlq", "application/octet-stream"],
    ["orders", "application/json"],
  ]);
  // The file broker has no host, so there is no server; the operations carry its kind.
  expect(doc.servers).toBeUndefined();
  expect(
    receive
      ?.tags()
      .all()
      .map((t) => t.name()),
  ).toEqual(["file"]);
  // The receipts subscriber takes no schema, so that message is the one gap.
  expect(messagesWithoutSchema(doc)).toEqual(["receipts"]);
});

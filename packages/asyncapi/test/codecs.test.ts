import { bytes, type Codec, json, out, RustStream, silentLogger } from "@ruststream/core";
import { cbor } from "@ruststream/core/cbor";
import { msgpack } from "@ruststream/core/msgpack";
import { expect, test } from "vitest";
import {
  type AsyncApiDocument,
  asyncapiDocument,
  asyncapiJson,
  asyncapiYaml,
  messagesWithoutSchema,
} from "../src/index.js";
import { expectMatchesHandlers } from "./handlers.js";
import { brokers, Order } from "./services.js";
import { validated } from "./validated.js";

/**
 * Orders on Kafka (a message binding and a retry topic), with a reply and a dead letter, read with
 * `codecs` when given; and an importer publishing to the orders topic through `ctx.out` in `packed`.
 */
function ordersApp(codecs: readonly Codec<unknown>[] | undefined, packed?: Codec<unknown>) {
  const { broker, orders } = brokers.kafka();
  const app = new RustStream({ name: "orders", version: "1.0.0" });
  app.broker(broker, (b) => {
    b.subscriber(orders, { schema: Order, ...(codecs === undefined ? {} : { codecs }) })
      .name("orders")
      .reply<{ orderId: number }>("receipts")
      .deadLetter("orders-dlq")
      .handle((order) => ({ orderId: order.id }));
    if (packed !== undefined) {
      b.subscriber("imports", { codec: bytes })
        .publishes({ orders: out("orders", { codec: packed }) })
        .handle(() => {});
    }
  });
  return app;
}

function documentOf(app: RustStream): AsyncApiDocument {
  return asyncapiDocument(app, { logger: silentLogger });
}

/** `doc` with the messages `names` taken out of its components, channels and operations. */
function withoutMessages(doc: AsyncApiDocument, names: readonly string[]): AsyncApiDocument {
  const copy = structuredClone(doc) as unknown as {
    channels: Record<string, { messages: Record<string, unknown> }>;
    operations: Record<string, { messages: { $ref: string }[]; reply?: unknown }>;
    components: { messages: Record<string, unknown> };
  };
  const named = (ref: { $ref: string }) => names.some((n) => ref.$ref.endsWith(`/messages/${n}`));
  for (const name of names) delete copy.components.messages[name];
  for (const channel of Object.values(copy.channels)) {
    for (const name of names) delete channel.messages[name];
  }
  for (const operation of Object.values(copy.operations)) {
    operation.messages = operation.messages.filter((ref) => !named(ref));
  }
  return copy as unknown as AsyncApiDocument;
}

test("a subscriber with codecs [msgpack, cbor]: three messages on its channel, one payload schema", async () => {
  const app = ordersApp([msgpack, cbor]);
  const doc = documentOf(app);
  const parsed = await validated(asyncapiJson(doc));
  await validated(asyncapiYaml(doc));
  expectMatchesHandlers(parsed, app.describe());

  const three = [
    ["Order", "application/json"],
    ["Order_msgpack", "application/msgpack"],
    ["Order_cbor", "application/cbor"],
  ];
  const idsAndTypes = (messages: { id(): string; contentType(): string | undefined }[]) =>
    messages.map((m) => [m.id(), m.contentType()]);
  expect(idsAndTypes(parsed.channels().get("orders")?.messages().all() ?? [])).toEqual(three);
  const receive = parsed.operations().get("receive_orders");
  expect(idsAndTypes(receive?.messages().all() ?? [])).toEqual(three);
  // Each decodes to what the one schema validates: all three point at it, and it is there once.
  const messages = doc.components?.messages ?? {};
  for (const [name] of three) {
    expect(messages[name ?? ""]?.payload).toEqual({ $ref: "#/components/schemas/Order" });
    expect(messages[name ?? ""]?.title ?? name).toBe("Order");
    expect(
      Object.keys(
        receive
          ?.messages()
          .get(name ?? "")
          ?.payload()
          ?.properties() ?? {},
      ),
    ).toEqual(Object.keys(Order.shape));
    // The partition key travels as the record key whatever the payload's encoding.
    expect(messages[name ?? ""]?.bindings).toEqual(messages.Order?.bindings);
    // A request in any of them is answered with its correlation-id.
    expect(messages[name ?? ""]?.correlationId?.location).toBe("$message.header#/correlation-id");
  }
  expect(Object.keys(doc.components?.schemas ?? {})).toEqual(["RustStreamHeaders", "Order"]);
  // The dead letter and the retry topic get copies as they arrived: any of the three.
  for (const copies of ["orders-dlq", "orders-retry"]) {
    expect(idsAndTypes(parsed.channels().get(copies)?.messages().all() ?? [])).toEqual(three);
  }
  expect(
    idsAndTypes(parsed.operations().get("send_orders_orders-retry")?.messages().all() ?? []),
  ).toEqual(three);
  // Three media types: no one default.
  expect(doc.defaultContentType).toBeUndefined();
  expect(messagesWithoutSchema(doc)).toEqual(["receipts"]);
});

test("without codecs the document is unchanged: the same one, less the two messages", async () => {
  const without = documentOf(ordersApp(undefined));
  await validated(asyncapiJson(without));
  expect(Object.keys(without.channels?.orders?.messages ?? {})).toEqual(["Order"]);
  expect(without.operations?.receive_orders?.messages).toEqual([
    { $ref: "#/channels/orders/messages/Order" },
  ]);
  const { defaultContentType, ...rest } = without;
  expect(defaultContentType).toBe("application/json");
  const withCodecs = documentOf(ordersApp([msgpack, cbor]));
  expect(withoutMessages(withCodecs, ["Order_msgpack", "Order_cbor"])).toEqual(rest);
});

test("a message's name follows its media type, not where its codec stands in the list", async () => {
  const doc = documentOf(ordersApp([cbor, msgpack]));
  await validated(asyncapiJson(doc));
  expect(Object.keys(doc.channels?.orders?.messages ?? {})).toEqual([
    "Order",
    "Order_cbor",
    "Order_msgpack",
  ]);
  expect(doc.components?.messages?.Order_cbor?.contentType).toBe("application/cbor");
  expect(doc.components?.messages?.Order_msgpack?.contentType).toBe("application/msgpack");
});

test("a ctx.out publish in a media type the reader decodes carries the reader's message, schema included", async () => {
  const doc = documentOf(ordersApp([msgpack], msgpack));
  await validated(asyncapiJson(doc));
  expect(doc.operations?.send_imports_orders?.messages).toEqual([
    { $ref: "#/channels/orders/messages/Order_msgpack" },
  ]);
  expect(Object.keys(doc.channels?.orders?.messages ?? {})).toEqual(["Order", "Order_msgpack"]);
  expect(messagesWithoutSchema(doc)).toEqual(["receipts"]);

  // In one it does not decode, the publish is a message of its own, and has no schema.
  const other = documentOf(ordersApp([msgpack], cbor));
  await validated(asyncapiJson(other));
  expect(other.operations?.send_imports_orders?.messages).toEqual([
    { $ref: "#/channels/orders/messages/orders" },
  ]);
  expect(other.components?.messages?.orders?.contentType).toBe("application/cbor");
  expect(messagesWithoutSchema(other)).toEqual(["receipts", "orders"]);
});

test("a ctx.out publish whose content type differs only in case and parameters carries the reader's message", async () => {
  // The runtime reads `application/JSON; charset=utf-8` with the reader's JSON codec: one media type.
  const spelled: Codec<unknown> = { ...json, contentType: "application/JSON; charset=utf-8" };
  const doc = documentOf(ordersApp(undefined, spelled));
  await validated(asyncapiJson(doc));
  expect(doc.operations?.send_imports_orders?.messages).toEqual([
    { $ref: "#/channels/orders/messages/Order" },
  ]);
  expect(Object.keys(doc.channels?.orders?.messages ?? {})).toEqual(["Order"]);
  expect(messagesWithoutSchema(doc)).toEqual(["receipts"]);
});

test("without a schema each media type's message is named after the address and listed without a schema; bytes aside", async () => {
  const app = new RustStream({ name: "events", version: "1.0.0" });
  app.broker(brokers.memory().broker, (b) => {
    // A different message, mounted first, holds the name the msgpack one of `events` would get.
    b.subscriber("events_msgpack", { codec: bytes }).handle(() => {});
    b.subscriber("events", { codecs: [msgpack] }).handle(() => {});
    // Typed unknown: what it hands over is raw bytes or a decoded MessagePack value.
    b.subscriber<unknown>("blobs", { codec: bytes, codecs: [msgpack] }).handle(() => {});
  });
  const doc = documentOf(app);
  await validated(asyncapiJson(doc));
  expect(Object.keys(doc.channels?.events?.messages ?? {})).toEqual(["events", "events_msgpack_2"]);
  expect(doc.components?.messages?.events_msgpack?.contentType).toBe("application/octet-stream");
  expect(doc.components?.messages?.events_msgpack_2?.contentType).toBe("application/msgpack");
  expect(Object.keys(doc.channels?.blobs?.messages ?? {})).toEqual(["blobs", "blobs_msgpack"]);
  // Raw bytes are their own format; a decoded MessagePack payload has a shape the app did not give.
  expect(messagesWithoutSchema(doc)).toEqual(["events", "events_msgpack_2", "blobs_msgpack"]);
});

import type { AsyncAPIDocumentInterface } from "@asyncapi/parser";
import { RustStream, silentLogger } from "@ruststream/core";
import { RabbitBroker, RabbitStream } from "@ruststream/rabbitmq";
import { describe, expect, test } from "vitest";
import {
  asyncapiDocument,
  asyncapiJson,
  asyncapiYaml,
  messagesWithoutSchema,
} from "../src/index.js";
import { expectMatchesHandlers, payloadFields } from "./handlers.js";
import { brokers, orderService } from "./services.js";
import { validated } from "./validated.js";

async function documentOn(kind: keyof typeof brokers) {
  const { broker, orders } = brokers[kind]();
  const app = orderService(`orders-on-${kind}`, broker, orders);
  const doc = asyncapiDocument(app, { logger: silentLogger });
  const parsed = await validated(asyncapiJson(doc));
  return { app, doc, parsed };
}

function channel(parsed: AsyncAPIDocumentInterface, address: string) {
  const found = parsed
    .channels()
    .all()
    .find((c) => c.address() === address);
  if (found === undefined) throw new Error(`no channel at ${address}`);
  return found;
}

describe.each(Object.keys(brokers) as (keyof typeof brokers)[])("a service on %s", (kind) => {
  test("validates, in JSON and in YAML, and matches its handlers", async () => {
    const { app, doc, parsed } = await documentOn(kind);
    await validated(asyncapiYaml(doc));
    expectMatchesHandlers(parsed, app.describe());
    // The three validators each gave their fields.
    expect(payloadFields(parsed, "receive_orders")).toEqual(["id", "sku", "qty"]);
    expect(payloadFields(parsed, "receive_quotes")).toEqual(["sku", "qty"]);
    expect(payloadFields(parsed, "receive_audit-log")).toEqual(["orderId", "at", "note"]);
    // Bytes are their own format; the replies are typed in TypeScript only.
    expect(messagesWithoutSchema(doc).sort()).toEqual(["quotes.reply-to", "receipts"]);
    // One codec everywhere but the dead letters' bytes: no default media type.
    expect(doc.defaultContentType).toBeUndefined();
    const order = parsed.operations().get("receive_orders")?.messages().all()[0];
    expect(order?.title() ?? order?.name()).toBe("Order");
    expect(order?.headers()?.properties()).toHaveProperty("x-ruststream-retry-count");
    expect(order?.correlationId()?.location()).toBe("$message.header#/correlation-id");
  });
}, 60_000);

describe("servers and bindings", () => {
  test("memory and file have no host, so no server; their facts stay in the extension", async () => {
    for (const kind of ["memory", "file"] as const) {
      const { doc, parsed } = await documentOn(kind);
      expect(doc.servers).toBeUndefined();
      expect(channel(parsed, "orders").servers().all()).toEqual([]);
    }
    const { doc } = await documentOn("memory");
    expect(doc.operations?.receive_orders?.["x-ruststream-bindings"]).toEqual({
      memory: { group: "billing" },
    });
    // A bare name states no facts: no extension, on every broker without AsyncAPI bindings.
    for (const kind of ["memory", "file", "redis", "postgres"] as const) {
      const { doc } = await documentOn(kind);
      expect(doc.operations?.receive_quotes?.["x-ruststream-bindings"]).toBeUndefined();
    }
  });

  test("redis: the server's host, and no binding (AsyncAPI's Redis binding has no fields)", async () => {
    const { doc, parsed } = await documentOn("redis");
    expect(doc.servers).toEqual({ redis: { host: "redis.internal:6380", protocol: "redis" } });
    expect(
      channel(parsed, "orders")
        .servers()
        .all()
        .map((s) => s.id()),
    ).toEqual(["redis"]);
    expect(doc.operations?.receive_orders?.bindings).toBeUndefined();
  });

  test("kafka: the group as the operation binding, the record key, the retry topic", async () => {
    const { doc, parsed } = await documentOn("kafka");
    expect(doc.servers?.kafka).toMatchObject({ host: "kafka-1.internal:9092", protocol: "kafka" });
    const receive = parsed.operations().get("receive_orders");
    expect(receive?.bindings().get("kafka")?.value()).toEqual({
      groupId: { type: "string", enum: ["billing"] },
    });
    expect(receive?.bindings().get("kafka")?.version()).toBe("0.5.0");
    const message = receive?.messages().all()[0];
    expect(message?.bindings().get("kafka")?.value()).toMatchObject({ key: { type: "string" } });
    const operation = doc.operations?.receive_orders;
    expect(operation?.["x-ruststream-bindings"]).toEqual({ kafka: { commit: "tracked" } });
    expect(operation?.["x-ruststream-retry"]?.retryDestination).toBe("orders-retry");
    const retries = parsed
      .operations()
      .filterBySend()
      .filter((op) => op.channels().all()[0]?.address() === "orders-retry");
    expect(retries.map((op) => op.messages().all()[0]?.id())).toEqual(["Order"]);
  });

  test("pulsar: namespace and persistence on every channel, the subscription in the extension", async () => {
    const { doc, parsed } = await documentOn("pulsar");
    expect(doc.servers?.pulsar).toEqual({ host: "pulsar.internal:6650", protocol: "pulsar" });
    const orders = channel(parsed, "persistent://shop/sales/orders").bindings().get("pulsar");
    expect(orders?.value()).toEqual({ namespace: "sales", persistence: "persistent" });
    expect(orders?.version()).toBe("0.1.0");
    expect(channel(parsed, "receipts").bindings().get("pulsar")?.value()).toMatchObject({
      namespace: "default",
      persistence: "persistent",
    });
    expect(doc.operations?.receive_orders?.["x-ruststream-bindings"]).toEqual({
      pulsar: { subscriptionType: "Key_Shared", subscription: "billing" },
    });
  });

  test("rabbitmq: the queue as the channel binding, acks on the operation, the rest in the extension", async () => {
    const { doc, parsed } = await documentOn("rabbitmq");
    expect(doc.servers).toEqual({ rabbitmq: { host: "rabbit.internal:5672", protocol: "amqp" } });
    const orders = channel(parsed, "orders").bindings().get("amqp");
    expect(orders?.value()).toEqual({
      is: "queue",
      queue: { name: "orders", durable: true, exclusive: false, autoDelete: false },
    });
    expect(orders?.version()).toBe("0.3.0");
    const receive = parsed.operations().get("receive_orders");
    expect(receive?.bindings().get("amqp")?.value()).toEqual({ ack: true });
    // AMQP's message binding has only a content encoding and a message type: nothing to say.
    expect(receive?.messages().all()[0]?.bindings().get("amqp")).toBeUndefined();
    // Published to through the default exchange, where a routing key is a queue's name: the name
    // alone, since no descriptor states its flags; a bare name read likewise.
    for (const address of ["receipts", "quotes"]) {
      expect(channel(parsed, address).bindings().get("amqp")?.value()).toEqual({
        is: "queue",
        queue: { name: address },
      });
    }
    expect(doc.operations?.receive_orders?.["x-ruststream-bindings"]).toEqual({
      amqp: {
        queueType: "quorum",
        prefetch: 64,
        bindings: [
          { exchange: "events", exchangeType: "topic", routingKey: "orders.*" },
          { exchange: "audit", headers: { region: "eu" }, match: "any" },
        ],
      },
    });
    expect(doc.operations?.receive_quotes?.bindings).toEqual({
      amqp: { ack: true, bindingVersion: "0.3.0" },
    });
  });

  test("postgres: the server's host, and the queue's claim in the extension (AsyncAPI has no PostgreSQL binding)", async () => {
    const { doc, parsed } = await documentOn("postgres");
    expect(doc.servers).toEqual({ postgres: { host: "db.internal:5433", protocol: "postgres" } });
    expect(channel(parsed, "orders").bindings().all()).toEqual([]);
    expect(doc.operations?.receive_orders?.bindings).toBeUndefined();
    // The mount's maxAttempts and deadLetter are the queue's retry declaration, not its bindings.
    expect(doc.operations?.receive_orders?.["x-ruststream-bindings"]).toEqual({
      postgres: { claim: 50, leaseMs: 60_000, transactional: false, keyOrder: true, ack: "delete" },
    });
  });

  test("rabbitmq: a stream's offset stays in the extension", () => {
    const app = new RustStream({ name: "ledger", version: "1.0.0" });
    app.broker(new RabbitBroker({ url: "amqp://rabbit.internal:5672" }), (b) => {
      b.subscriber(new RabbitStream("ledger", { offset: new Date("2026-12-01T00:00:00Z") })).handle(
        () => {},
      );
    });
    const doc = asyncapiDocument(app, { logger: silentLogger });
    expect(doc.operations?.receive_ledger?.["x-ruststream-bindings"]).toEqual({
      amqp: { queueType: "stream", prefetch: 256, offset: "2026-12-01T00:00:00.000Z" },
    });
  });
});

import { RustStream, silentLogger } from "@ruststream/core";
import { JetStreamSubject, KvWatch, NatsBroker, NatsSubject, ObjectWatch } from "@ruststream/nats";
import { expect, test } from "vitest";
import { asyncapiDocument, asyncapiJson } from "../src/index.js";
import { brokers, orderService } from "./services.js";
import { parserErrors, validated } from "./validated.js";

/** The document of an app with one subscriber, on `source`. */
function documentOf(source: NatsSubject | JetStreamSubject | KvWatch | ObjectWatch) {
  const app = new RustStream({ name: "billing", version: "1.0.0" });
  app.broker(new NatsBroker({ servers: "nats://nats.internal:4222" }), (b) => {
    b.subscriber(source).handle(() => {});
  });
  return asyncapiDocument(app, { logger: silentLogger });
}

test("nats: the server, and a core queue group as the operation's binding", async () => {
  const { broker, orders } = brokers.nats();
  const doc = asyncapiDocument(orderService("orders-on-nats", broker, orders), {
    logger: silentLogger,
  });
  const parsed = await validated(asyncapiJson(doc));
  expect(doc.servers).toEqual({ nats: { host: "nats-1.internal:4222", protocol: "nats" } });
  const receive = parsed.operations().get("receive_orders");
  expect(receive?.bindings().get("nats")?.value()).toEqual({ queue: "billing" });
  expect(receive?.bindings().get("nats")?.version()).toBe("0.1.0");
  // The subject is the channel's address and the queue has its field: nothing is left over.
  expect(doc.operations?.receive_orders?.["x-ruststream-bindings"]).toBeUndefined();
  // NATS's channel and message bindings are reserved, with no field.
  expect(doc.channels?.orders?.bindings).toBeUndefined();
  expect(receive?.messages().all()[0]?.bindings().get("nats")).toBeUndefined();
  // A bare subject, in no queue group: no binding at all.
  expect(doc.operations?.receive_quotes?.bindings).toBeUndefined();
  expect(doc.operations?.receive_quotes?.["x-ruststream-bindings"]).toBeUndefined();
});

test("nats: a JetStream consumer has no field in the binding, so its facts stay in the extension", async () => {
  const doc = documentOf(
    new JetStreamSubject("orders.created", { stream: "ORDERS", durable: "billing" }),
  );
  await validated(asyncapiJson(doc));
  const receive = doc.operations?.["receive_orders.created"];
  expect(receive?.bindings).toBeUndefined();
  expect(receive?.["x-ruststream-bindings"]).toEqual({
    nats: { subjects: ["orders.created"], stream: "ORDERS", durable: "billing", ackWaitMs: 30_000 },
  });
});

test("nats: a KV watch has no field in the binding, so its bucket and keys stay in the extension", async () => {
  const doc = documentOf(new KvWatch("config", { keys: ["users.*"] }));
  await validated(asyncapiJson(doc));
  const [id, receive] = Object.entries(doc.operations ?? {})[0] ?? [];
  // The channel is the watch's name, `<bucket>:<keys>`, made an id.
  expect(id).toBe("receive_config_users._");
  expect(receive?.bindings).toBeUndefined();
  expect(receive?.["x-ruststream-bindings"]).toEqual({
    nats: { bucket: "config", keys: ["users.*"], ackWaitMs: 30_000 },
  });
});

test("nats: an object store watch's store stays in the extension", async () => {
  const doc = documentOf(new ObjectWatch("reports"));
  await validated(asyncapiJson(doc));
  const receive = doc.operations?.receive_reports;
  expect(receive?.bindings).toBeUndefined();
  expect(receive?.["x-ruststream-bindings"]).toEqual({
    nats: { objectStore: "reports", ackWaitMs: 30_000 },
  });
});

test("nats: a queue group's name past the binding's 255 characters stays in the extension", async () => {
  const queue = "q".repeat(256);
  // What the rule keeps out: the parser refuses the binding with such a name.
  const bound = documentOf(new NatsSubject("orders", { queue: "billing" }));
  const text = asyncapiJson(bound).replace('"queue": "billing"', `"queue": "${queue}"`);
  expect(text).toContain(queue);
  expect((await parserErrors(text)).join("\n")).toMatch(/queue/);

  const doc = documentOf(new NatsSubject("orders", { queue }));
  await validated(asyncapiJson(doc));
  expect(doc.operations?.receive_orders?.bindings).toBeUndefined();
  expect(doc.operations?.receive_orders?.["x-ruststream-bindings"]).toEqual({ nats: { queue } });
});

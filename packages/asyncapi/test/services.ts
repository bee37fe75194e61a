import { tmpdir } from "node:os";
import { join } from "node:path";
import { bytes, MemoryBroker, MemoryTopic, RustStream, type Source } from "@ruststream/core";
import { FileBroker, FileStream } from "@ruststream/file";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { NatsBroker, NatsSubject } from "@ruststream/nats";
import { PostgresBroker, PostgresQueue } from "@ruststream/postgres";
import { PulsarBroker, PulsarKeyShared } from "@ruststream/pulsar";
import { RabbitBroker, RabbitExchange, RabbitQuorumQueue } from "@ruststream/rabbitmq";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";

export const Order = z
  .object({ id: z.number().int(), sku: z.string().min(1), qty: z.number().int().positive() })
  .meta({ title: "Order", description: "An order a customer placed." });

export const Quote = type({ sku: "string", "qty?": "number.integer" });

export const AuditEntry = toStandardJsonSchema(
  v.object({ orderId: v.number(), at: v.string(), note: v.optional(v.string()) }),
);

/** The same four handlers on any broker: what each broker's document is held against. */
export function orderService(name: string, broker: BrokerOf, orders: Source | string): RustStream {
  const app = new RustStream({ name, version: "2.1.0" });
  app.broker(broker, (b) => {
    b.subscriber(orders, { schema: Order })
      .name("orders")
      .reply<{ orderId: number }>("receipts")
      .publishes({ audit: "audit-log" })
      .workers(2, { key: (order) => order.sku })
      .maxAttempts(5)
      .deadLetter("orders-dlq")
      .handle(async (order, ctx) => {
        await ctx.out.audit.publish({ orderId: order.id, at: "now" });
        return { orderId: order.id };
      });
    b.subscriber("quotes", { schema: Quote })
      .reply<{ price: number }>()
      .handle(() => ({ price: 1 }));
    b.subscriber("audit-log", { schema: AuditEntry }).handle(() => {});
    b.subscriber("orders-dlq", { codec: bytes }).handle(() => {});
  });
  return app;
}

type BrokerOf = Parameters<RustStream["broker"]>[0];

/** Each broker with the descriptor its orders subscriber reads through; nothing connects. */
export const brokers = {
  memory: () => ({
    broker: new MemoryBroker(),
    orders: new MemoryTopic("orders", { group: "billing" }),
  }),
  file: () => ({
    broker: new FileBroker({ path: join(tmpdir(), "asyncapi-never-opened.ss"), consumer: "svc" }),
    orders: new FileStream("orders"),
  }),
  redis: () => ({
    broker: new RedisBroker({ url: "redis://redis.internal:6380/2" }),
    orders: new RedisStream("orders", { group: "billing" }),
  }),
  kafka: () => ({
    broker: new KafkaBroker({ brokers: ["kafka-1.internal:9092", "kafka-2.internal:9092"] }),
    orders: new KafkaTopic("orders", {
      group: "billing",
      commit: "tracked",
      retryTopic: "orders-retry",
    }),
  }),
  pulsar: () => ({
    broker: new PulsarBroker({ url: "pulsar://pulsar.internal:6650" }),
    orders: new PulsarKeyShared("persistent://shop/sales/orders", { subscription: "billing" }),
  }),
  rabbitmq: () => ({
    broker: new RabbitBroker({ url: "amqp://rabbit.internal:5672/shop" }),
    orders: new RabbitQuorumQueue("orders", {
      bindings: [
        { exchange: new RabbitExchange("events", { type: "topic" }), routingKey: "orders.*" },
        { exchange: "audit", headers: { region: "eu" }, match: "any" },
      ],
      prefetch: 64,
    }),
  }),
  nats: () => ({
    broker: new NatsBroker({
      servers: ["nats://nats-1.internal:4222", "nats://nats-2.internal:4222"],
    }),
    orders: new NatsSubject("orders", { queue: "billing" }),
  }),
  postgres: () => ({
    broker: new PostgresBroker({ url: "postgres://db.internal:5433/shop" }),
    orders: new PostgresQueue("orders", { claim: 50, leaseMs: 60_000 }),
  }),
} as const;

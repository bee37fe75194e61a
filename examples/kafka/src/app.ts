import { drop, RustStream } from "@ruststream/core";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { z } from "zod";

// An order as the service accepts it: a message the schema rejects never reaches the handler.
export const Order = z.object({
  id: z.number().int(),
  sku: z.string().min(1),
  qty: z.number().int().positive(),
});

export interface Receipt {
  readonly orderId: number;
  readonly total: number;
}

const prices: Readonly<Record<string, number>> = { apple: 3, pear: 4, plum: 2 };

// The cluster, the topics and the consumer group come from the environment, so a deployment (or a
// live test) points the same module elsewhere without an edit.
const brokers = process.env.KAFKA_BROKERS ?? "127.0.0.1:9092";
const group = process.env.KAFKA_GROUP ?? "orders";
export const topics = {
  orders: process.env.ORDERS_TOPIC ?? "orders",
  receipts: process.env.RECEIPTS_TOPIC ?? "receipts",
};

export const app = new RustStream({ name: "orders", version: "1.0.0" });

// Every replica joins the one consumer group and shares the partitions; "tracked" commits exactly
// what was settled, so a restart resumes after it. The engine is the Kafka client the broker runs on.
app.broker(new KafkaBroker({ brokers, engine: "kafkajs", group }), (b) => {
  b.subscriber(new KafkaTopic(topics.orders, { commit: "tracked" }), { schema: Order })
    .reply<Receipt>(topics.receipts)
    .handle((order, ctx) => {
      const price = prices[order.sku];
      if (price === undefined) {
        ctx.log.warn({ id: order.id, sku: order.sku }, "unknown sku, order dropped");
        return drop();
      }
      return { orderId: order.id, total: order.qty * price };
    });
});

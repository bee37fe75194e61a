import { drop, RustStream } from "@ruststream/core";
import { RedisBroker } from "@ruststream/redis";
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

// The server and the stream names come from the environment, so a deployment (or a live test)
// points the same module elsewhere without an edit.
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const topics = {
  orders: process.env.ORDERS_TOPIC ?? "orders",
  receipts: process.env.RECEIPTS_TOPIC ?? "receipts",
};

export const app = new RustStream({ name: "orders", version: "1.0.0" });

// A bare name is a Redis stream read by a consumer group named after the app ("orders"), so every
// replica of the service shares the work and a restart resumes where the group left off.
app.broker(new RedisBroker({ url }), (b) => {
  b.subscriber(topics.orders, { schema: Order })
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

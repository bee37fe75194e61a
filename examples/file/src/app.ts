import { drop, RustStream } from "@ruststream/core";
import { FileBroker } from "@ruststream/file";
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

// The file and the stream names come from the environment, so a deployment (or a live test)
// points the same module elsewhere without an edit.
export const dataFile = process.env.ORDERS_FILE ?? "data/orders.ss";
export const topics = {
  orders: process.env.ORDERS_TOPIC ?? "orders",
  receipts: process.env.RECEIPTS_TOPIC ?? "receipts",
};

export const app = new RustStream({ name: "orders", version: "1.0.0" });

// No server: the messages live in an append-only stream file. The consumer name makes each
// subscriber durable, so a restarted service resumes after the last message it settled.
app.broker(new FileBroker({ path: dataFile, consumer: "orders-service" }), (b) => {
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

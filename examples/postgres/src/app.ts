import { drop, RustStream } from "@ruststream/core";
import { PostgresBroker } from "@ruststream/postgres";
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

// The database and the queue names come from the environment, so a deployment (or a live test)
// points the same module elsewhere without an edit.
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const topics = {
  orders: process.env.ORDERS_TOPIC ?? "orders",
  receipts: process.env.RECEIPTS_TOPIC ?? "receipts",
};

export const app = new RustStream({ name: "orders", version: "1.0.0" });

// Both queues are rows of one table (`ruststream_queue`), created at connect when missing
// (`ensureSchema`; a service with migrations runs `schemaSql()` in one instead). A bare name is a
// leased queue: every replica claims from it with FOR UPDATE SKIP LOCKED, so they share the work,
// and the rows of a replica that dies come back once their lease ends.
app.broker(new PostgresBroker({ url, ensureSchema: true }), (b) => {
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

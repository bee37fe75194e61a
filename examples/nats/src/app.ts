import { drop, RustStream } from "@ruststream/core";
import { JetStreamSubject, NatsBroker } from "@ruststream/nats";
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

// The server, the subjects and the stream come from the environment, so a deployment (or a live
// test) points the same module elsewhere without an edit.
const servers = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const stream = process.env.ORDERS_STREAM ?? "ORDERS";
export const topics = {
  orders: process.env.ORDERS_TOPIC ?? "orders",
  receipts: process.env.RECEIPTS_TOPIC ?? "receipts",
};

export const app = new RustStream({ name: "orders", version: "1.0.0" });

// Orders and receipts are kept in one JetStream stream, declared if it is missing. Every replica
// pulls from the one durable consumer, so they share the work, and a restart resumes where it left
// off. The app publishes to JetStream: a receipt is stored (the stream's acknowledgement) before
// its order is acked.
app.broker(new NatsBroker({ servers, publish: { jetStream: true } }), (b) => {
  const orders = new JetStreamSubject(topics.orders, {
    stream,
    durable: "orders",
    declare: { subjects: [topics.orders, topics.receipts], storage: "file" },
  });
  b.subscriber(orders, { schema: Order })
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

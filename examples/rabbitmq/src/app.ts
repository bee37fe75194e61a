import { drop, RustStream } from "@ruststream/core";
import { RabbitBroker, RabbitQuorumQueue } from "@ruststream/rabbitmq";
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

// The node and the queue names come from the environment, so a deployment (or a live test) points
// the same module elsewhere without an edit.
const url = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
export const topics = {
  orders: process.env.ORDERS_TOPIC ?? "orders",
  receipts: process.env.RECEIPTS_TOPIC ?? "receipts",
};

export const app = new RustStream({ name: "orders", version: "1.0.0" });

// Both queues are quorum queues, declared at connect (`declare: true`). Every replica consumes the
// one orders queue, so they share the work. A reply goes through the default exchange, mandatory:
// the receipts queue is in `topology`, so it exists before the first reply, which would otherwise
// be unroutable (an error) until someone declared it.
app.broker(
  new RabbitBroker({ url, declare: true, topology: [new RabbitQuorumQueue(topics.receipts)] }),
  (b) => {
    b.subscriber(new RabbitQuorumQueue(topics.orders), { schema: Order })
      .reply<Receipt>(topics.receipts)
      .handle((order, ctx) => {
        const price = prices[order.sku];
        if (price === undefined) {
          ctx.log.warn({ id: order.id, sku: order.sku }, "unknown sku, order dropped");
          return drop();
        }
        return { orderId: order.id, total: order.qty * price };
      });
  },
);

import { bytes, drop, RustStream, readDeadLetterOrigin } from "@ruststream/core";
import { FileBroker } from "@ruststream/file";
import { z } from "zod";

export const Order = z.object({
  id: z.number().int(),
  sku: z.string().min(1),
  qty: z.number().int().positive(),
});

export interface Receipt {
  readonly orderId: number;
  readonly sku: string;
  readonly total: number;
}

const prices: Readonly<Record<string, number>> = { apple: 3, pear: 4, plum: 2 };

// The embedded default broker: a SeaStreamer stream file, no server to run. The consumer name makes
// each subscriber durable: a restarted service resumes after the last message it settled. Swap in
// another broker here and nothing below changes.
export const dataFile = process.env.ORDERS_FILE ?? "data/orders.ss";
export const broker = new FileBroker({ path: dataFile, consumer: "orders-service" });

export const app = new RustStream({ name: "orders", version: "1.0.0" });

app.broker(broker, (b) => {
  b.subscriber("orders", { schema: Order })
    .reply<Receipt>("receipts")
    .workers(4, { key: (order) => order.sku })
    .maxAttempts(3)
    .deadLetter("orders-dlq")
    .handle(async (order, ctx) => {
      const price = prices[order.sku];
      if (price === undefined) {
        ctx.log.warn({ id: order.id, sku: order.sku }, "unknown sku, order dropped");
        return drop();
      }
      ctx.log.info({ id: order.id, sku: order.sku, qty: order.qty }, "order accepted");
      return { orderId: order.id, sku: order.sku, total: order.qty * price };
    });

  b.subscriber("receipts").handle((receipt, ctx) => {
    ctx.log.info({ receipt }, "receipt issued");
  });

  // Dead letters arrive as they were sent, so read them as bytes: they may not be JSON at all.
  b.subscriber("orders-dlq", { codec: bytes }).handle((payload, ctx) => {
    const origin = readDeadLetterOrigin(ctx.headers);
    ctx.log.warn(
      { from: origin?.source, reason: origin?.reason, payload: new TextDecoder().decode(payload) },
      "order dead-lettered",
    );
  });
});

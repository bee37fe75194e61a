import type { PostgresOutbox } from "@ruststream/postgres";
import type pg from "pg";
import { z } from "zod";

// An order, and the event its placement publishes: the shipping side reads the same shape.
export const OrderPlaced = z.object({
  id: z.string().min(1),
  sku: z.string().min(1),
  qty: z.number().int().positive(),
});
export type OrderPlaced = z.infer<typeof OrderPlaced>;

/** The service's own tables: the orders it takes, and the shipments its consumer makes of them. */
export const ordersSchemaSql = `
  CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, sku text NOT NULL, qty int NOT NULL);
  CREATE TABLE IF NOT EXISTS shipments (order_id text PRIMARY KEY, sku text NOT NULL, qty int NOT NULL);
`;

/**
 * Writes the order and its "order placed" event in one transaction: both are there, or neither
 * (an order id taken already fails the INSERT, and the event goes with the rollback). `kafka` is
 * the relay's label for the broker; the event's partition key is the order id, so one order's
 * events stay in order.
 */
export async function placeOrder(
  pool: pg.Pool,
  outbox: PostgresOutbox,
  topic: string,
  order: OrderPlaced,
): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("INSERT INTO orders (id, sku, qty) VALUES ($1, $2, $3)", [
      order.id,
      order.sku,
      order.qty,
    ]);
    const outboxId = await outbox.publish(
      client,
      { broker: "kafka", name: topic },
      { payload: new TextEncoder().encode(JSON.stringify(order)), partitionKey: order.id },
    );
    await client.query("COMMIT");
    return outboxId;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

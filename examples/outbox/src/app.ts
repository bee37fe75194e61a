import { RustStream } from "@ruststream/core";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { PostgresBroker, PostgresInbox } from "@ruststream/postgres";
import pg from "pg";
import { OrderPlaced, ordersSchemaSql, placeOrder } from "./orders.js";

// Where it connects and the topic come from the environment, so a deployment (or the live test)
// points the same module elsewhere without an edit.
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const brokers = process.env.KAFKA_BROKERS ?? "127.0.0.1:9092";
export const topic = process.env.ORDERS_TOPIC ?? "orders.placed";

/** The running service: place orders, read what shipping made of them, stop. */
export interface OrdersService {
  placeOrder(order: OrderPlaced): Promise<string>;
  shipments(): Promise<OrderPlaced[]>;
  stop(): Promise<void>;
}

/**
 * Opens the service: its tables, the outbox (`ruststream_queue_outbox`, created when missing), and
 * an app on Kafka whose relay, started once the app's connections are open, publishes each
 * committed event through the app's own Kafka connection. The same app's shipping subscriber
 * applies each event once: the inbox records its outbox id in the transaction that writes the
 * shipment, so a copy the relay sends again (after a crash) changes nothing.
 */
export async function openService(): Promise<OrdersService> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  await pool.query(ordersSchemaSql);
  const inbox = new PostgresInbox("shipping");
  await inbox.ensureSchema(pool);
  const outbox = await new PostgresBroker({ url, ensureSchema: true }).connectOutbox();
  const kafka = new KafkaBroker({ brokers, group: "shipping" });

  const app = new RustStream({ name: "orders", version: "1.0.0" })
    .broker(kafka, (b) => {
      b.subscriber(new KafkaTopic(topic, { start: "earliest", create: { partitions: 4 } }), {
        schema: OrderPlaced,
      }).handle(async (order, ctx) => {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          if (await inbox.first(client, ctx.delivery)) {
            await client.query("INSERT INTO shipments (order_id, sku, qty) VALUES ($1, $2, $3)", [
              order.id,
              order.sku,
              order.qty,
            ]);
          }
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        } finally {
          client.release();
        }
      });
    })
    .afterStartup(async (running) => {
      // Publishes through the app (its middleware, its metrics), and the app's stop stops it first.
      await outbox.relayIn(running, { brokers: { kafka } });
    });
  const running = await app.start();

  return {
    placeOrder: (order) => placeOrder(pool, outbox, topic, order),
    shipments: async () => {
      const { rows } = await pool.query(
        "SELECT order_id AS id, sku, qty FROM shipments ORDER BY order_id",
      );
      return rows as OrderPlaced[];
    },
    // The app's stop stops the relay first: it finishes the publishes in flight on the app's Kafka
    // connection, which the app closes next.
    stop: async () => {
      await running.stop();
      await outbox.close();
      await pool.end();
    },
  };
}

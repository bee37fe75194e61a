import { bytes, RustStream } from "@ruststream/core";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBroker, PostgresInbox } from "../../src/index.js";
import { waitUntil } from "../support.js";

// The outbox in a service as the guide writes it: the relay started in afterStartup on the app's
// own Redis connection (outbox.relayIn), an order row and its event written in one transaction, and
// a subscriber of the same app applying the event once through the inbox in its own transaction.

describe("the outbox in an app", () => {
  it("relays through the app's publisher, and the subscriber applies the event once", async () => {
    const url = requireEnv("POSTGRES_URL");
    const redisUrl = requireEnv("REDIS_URL");
    const label = uniqueName("events");
    const topic = uniqueName("orders");
    const orders = `"${uniqueName("orders")}"`;
    const shipped = `"${uniqueName("shipped")}"`;
    const sql = new pg.Pool({ connectionString: url, max: 4 });
    await sql.query(`CREATE TABLE ${orders} (id text PRIMARY KEY)`);
    await sql.query(`CREATE TABLE ${shipped} (order_id text PRIMARY KEY)`);
    const inbox = new PostgresInbox("shipping", { table: "outbox_live_inbox" });
    await inbox.ensureSchema(sql);
    const outbox = await new PostgresBroker({
      url,
      table: "outbox_live",
      ensureSchema: true,
    }).connectOutbox();
    const redis = new RedisBroker({ url: redisUrl });

    const app = new RustStream({ name: "outbox-app", version: "1.0.0" })
      .broker(redis, (b) => {
        b.subscriber(new RedisStream(topic, { start: "beginning" }), { codec: bytes }).handle(
          async (payload, ctx) => {
            const client = await sql.connect();
            try {
              await client.query("BEGIN");
              if (await inbox.first(client, ctx.delivery)) {
                await client.query(`INSERT INTO ${shipped} VALUES ($1)`, [
                  new TextDecoder().decode(payload as Uint8Array),
                ]);
              }
              await client.query("COMMIT");
            } catch (error) {
              await client.query("ROLLBACK");
              throw error;
            } finally {
              client.release();
            }
          },
        );
      })
      .afterStartup(async (running) => {
        await outbox.relayIn(running, { brokers: { [label]: redis }, pollMs: 100 });
      });
    const running = await app.start();
    try {
      const client = await sql.connect();
      try {
        await client.query("BEGIN");
        await client.query(`INSERT INTO ${orders} VALUES ('o-1')`);
        await outbox.publish(
          client,
          { broker: label, name: topic },
          { payload: new TextEncoder().encode("o-1") },
        );
        await client.query("COMMIT");
      } finally {
        client.release();
      }
      await waitUntil(20_000, "the order shipped", async () => {
        const { rows } = await sql.query(`SELECT order_id FROM ${shipped}`);
        return rows.length === 1;
      });
      const { rows } = await sql.query(`SELECT order_id FROM ${shipped}`);
      expect(rows).toEqual([{ order_id: "o-1" }]);
      // Marked sent (deleted, the default) once Redis confirmed it.
      await waitUntil(20_000, "the outbox row gone", async () => {
        const left = await sql.query("SELECT 1 FROM outbox_live_outbox WHERE queue = $1", [label]);
        return left.rows.length === 0;
      });
    } finally {
      // Stops the relay first, then closes the connections.
      await running.stop();
      await outbox.close();
      await sql.query(`DROP TABLE ${orders}, ${shipped}`);
      await sql.end();
    }
  });
});

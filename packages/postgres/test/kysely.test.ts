import { requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectedPostgresBroker,
  kyselyTransaction,
  PostgresBroker,
  type PostgresOutbox,
  PostgresQueue,
} from "../src/index.js";

// A publish inside a Kysely transaction, on the real server: the queue's row (and an outbox
// message) exists only if Kysely commits the transaction it was written in, with the business row.

const table = "e2e_kysely";
const orders = `${table}_orders`;

interface Database {
  [orders]: { id: string; sku: string };
}

let db: Kysely<Database>;
let connected: ConnectedPostgresBroker;
let outbox: PostgresOutbox;
let probe: pg.Client;

beforeAll(async () => {
  const url = requireEnv("POSTGRES_URL");
  db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
  });
  await sql`CREATE TABLE IF NOT EXISTS ${sql.table(orders)} (id text PRIMARY KEY, sku text NOT NULL)`.execute(
    db,
  );
  connected = await new PostgresBroker({ url, table, ensureSchema: true }).connect();
  outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
  probe = new pg.Client({ connectionString: url });
  await probe.connect();
});

afterAll(async () => {
  await outbox?.close();
  await connected?.shutdown();
  await probe?.end();
  await db?.destroy();
});

/** Everything in `queue`, read up to a sentinel published outside any transaction. */
async function drain(queue: string): Promise<string[]> {
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: queue, payload: new TextEncoder().encode("sentinel") });
  const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs: 200 }));
  const seen: string[] = [];
  while (!seen.includes("sentinel")) {
    for (const delivery of await subscription.nextBatch(10)) {
      seen.push(text(delivery.payload));
      await delivery.ack();
    }
  }
  await subscription.close();
  return seen;
}

const ordersNamed = async (id: string) =>
  (await db.selectFrom(orders).select("sku").where("id", "=", id).execute()).map((r) => r.sku);

describe("a publish in a Kysely transaction", () => {
  it("is delivered with the business row once Kysely commits", async () => {
    const queue = uniqueName("kysely-commit");
    const id = uniqueName("order");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await db.transaction().execute(async (trx) => {
      await trx.insertInto(orders).values({ id, sku: "apple" }).execute();
      await publisher.publish({
        name: queue,
        payload: new TextEncoder().encode(id),
        options: { transaction: kyselyTransaction(trx) },
      });
    });
    expect(await ordersNamed(id)).toEqual(["apple"]);
    expect(await drain(queue)).toEqual([id, "sentinel"]);
  });

  it("leaves neither the business row nor the message when Kysely rolls back", async () => {
    const queue = uniqueName("kysely-rollback");
    const id = uniqueName("order");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const failed = await db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto(orders).values({ id, sku: "pear" }).execute();
        await publisher.publish({
          name: queue,
          payload: new TextEncoder().encode(id),
          options: { transaction: kyselyTransaction(trx) },
        });
        throw new Error("a business rule failed after the publish");
      })
      .catch((error: unknown) => error);
    expect(String(failed)).toContain("a business rule failed");
    expect(await ordersNamed(id)).toEqual([]);
    expect(await drain(queue)).toEqual(["sentinel"]);
  });

  it("writes an outbox message with the business row, and none when it rolls back", async () => {
    const label = uniqueName("kysely-outbox");
    const countOf = async () =>
      (
        await probe.query(`SELECT count(*)::int AS n FROM ${table}_outbox WHERE queue = $1`, [
          label,
        ])
      ).rows[0].n;
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto(orders)
        .values({ id: uniqueName("order"), sku: "plum" })
        .execute();
      await outbox.publish(
        kyselyTransaction(trx),
        { broker: label, name: "orders.placed" },
        {
          payload: new TextEncoder().encode("placed"),
          partitionKey: "o-1",
        },
      );
    });
    expect(await countOf()).toBe(1);
    await db
      .transaction()
      .execute(async (trx) => {
        await outbox.publish(
          kyselyTransaction(trx),
          { broker: label, name: "orders.placed" },
          {
            payload: new TextEncoder().encode("never"),
          },
        );
        throw new Error("rolled back");
      })
      .catch(() => undefined);
    expect(await countOf()).toBe(1);
  });

  it("refuses what is not a Kysely transaction, naming what it takes", () => {
    expect(() => kyselyTransaction({} as never)).toThrow(/db\.transaction\(\)\.execute/);
  });
});

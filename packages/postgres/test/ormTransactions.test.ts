import { HeaderMap } from "@ruststream/core";
import { requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import { pgTable, text as textColumn } from "drizzle-orm/pg-core";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectedPostgresBroker,
  drizzleTransaction,
  PostgresBroker,
  PostgresInbox,
  type PostgresOutbox,
  PostgresQueue,
  postgresHeaderNames,
  postgresJsTransaction,
  type Queryable,
} from "../src/index.js";

// A publish inside a transaction of Drizzle (on node-postgres and on postgres.js) and of
// postgres.js itself, on the real server: the queue's row, an outbox message and an inbox record
// exist only if the library commits the transaction they were written in, with the business row.

const table = "e2e_orm";
const orders = `${table}_orders`;
const ordersTable = pgTable(orders, { id: textColumn("id").primaryKey(), sku: textColumn("sku") });

let pool: pg.Pool;
let sqlJs: postgres.Sql;
let connected: ConnectedPostgresBroker;
let outbox: PostgresOutbox;
const inbox = new PostgresInbox("orm-tests", { table: `${table}_inbox` });

beforeAll(async () => {
  const url = requireEnv("POSTGRES_URL");
  pool = new pg.Pool({ connectionString: url, max: 3 });
  sqlJs = postgres(url, { max: 2, onnotice: () => {} });
  await pool.query(`CREATE TABLE IF NOT EXISTS ${orders} (id text PRIMARY KEY, sku text NOT NULL)`);
  await inbox.ensureSchema(pool);
  connected = await new PostgresBroker({ url, table, ensureSchema: true }).connect();
  outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
});

afterAll(async () => {
  await outbox?.close();
  await connected?.shutdown();
  await sqlJs?.end();
  await pool?.end();
});

/** What a case's transaction hands the test: the wrapped transaction and a business write in it. */
interface InTransaction {
  readonly tx: Queryable;
  insertOrder(id: string, sku: string): Promise<void>;
}

/** A library's transaction: commits when `work` resolves, rolls back when it throws. */
interface Library {
  readonly name: string;
  transaction(work: (t: InTransaction) => Promise<void>): Promise<void>;
}

const libraries: Library[] = [
  {
    name: "Drizzle on node-postgres",
    transaction: (work) =>
      drizzleNodePg({ client: pool }).transaction((tx) =>
        work({
          tx: drizzleTransaction(tx),
          insertOrder: async (id, sku) => {
            await tx.insert(ordersTable).values({ id, sku });
          },
        }),
      ),
  },
  {
    name: "Drizzle on postgres.js",
    transaction: (work) =>
      drizzlePostgresJs({ client: sqlJs }).transaction((tx) =>
        work({
          tx: drizzleTransaction(tx),
          insertOrder: async (id, sku) => {
            await tx.insert(ordersTable).values({ id, sku });
          },
        }),
      ),
  },
  {
    name: "postgres.js",
    transaction: async (work) => {
      await sqlJs.begin((tx) =>
        work({
          tx: postgresJsTransaction(tx),
          insertOrder: async (id, sku) => {
            await tx.unsafe(`INSERT INTO ${orders} (id, sku) VALUES ($1, $2)`, [id, sku]);
          },
        }),
      );
    },
  },
];

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

const skuOf = async (id: string) =>
  (await pool.query(`SELECT sku FROM ${orders} WHERE id = $1`, [id])).rows.map((r) => r.sku);

const outboxRows = async (label: string) =>
  (await pool.query(`SELECT 1 FROM ${table}_outbox WHERE queue = $1`, [label])).rows.length;

/** Publishes `id` to `queue` and to the outbox under `label`, both in `tx`, beside the order row. */
async function writeAll(t: InTransaction, id: string, queue: string, label: string) {
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await t.insertOrder(id, "apple");
  await publisher.publish({
    name: queue,
    payload: new TextEncoder().encode(id),
    partitionKey: id,
    options: { transaction: t.tx, priority: 3 },
  });
  await outbox.publish(
    t.tx,
    { broker: label, name: "orders.placed" },
    { payload: new TextEncoder().encode(id), partitionKey: id },
  );
}

describe.each(libraries)("a publish in a transaction of $name", (library) => {
  it("is there with the business row once the transaction commits: the queue's row and the outbox's", async () => {
    const [id, queue, label] = [uniqueName("order"), uniqueName("orm"), uniqueName("orm-outbox")];
    await library.transaction((t) => writeAll(t, id, queue, label));
    expect(await skuOf(id)).toEqual(["apple"]);
    expect(await drain(queue)).toEqual([id, "sentinel"]);
    expect(await outboxRows(label)).toBe(1);
  });

  it("leaves neither the business row nor a message when the transaction rolls back", async () => {
    const [id, queue, label] = [uniqueName("order"), uniqueName("orm"), uniqueName("orm-outbox")];
    const failed = await library
      .transaction(async (t) => {
        await writeAll(t, id, queue, label);
        throw new Error("a business rule failed after the publishes");
      })
      .catch((error: unknown) => error);
    expect(String(failed)).toContain("a business rule failed");
    expect(await skuOf(id)).toEqual([]);
    expect(await drain(queue)).toEqual(["sentinel"]);
    expect(await outboxRows(label)).toBe(0);
  });

  it("answers the inbox from the statement's rows: the first time, then not", async () => {
    const headers = new HeaderMap();
    headers.set(postgresHeaderNames.outboxId, crypto.randomUUID());
    const answers: boolean[] = [];
    for (let i = 0; i < 2; i++) {
      await library.transaction(async (t) => {
        answers.push(await inbox.first(t.tx, { headers }));
      });
    }
    expect(answers).toEqual([true, false]);
  });
});

describe("the transaction wrappers refuse what is not their library's transaction", () => {
  it("names what each takes", () => {
    expect(() => drizzleTransaction({} as never)).toThrow(/db\.transaction\(async \(tx\)/);
    expect(() => postgresJsTransaction({} as never)).toThrow(/sql\.begin\(async \(tx\)/);
  });
});

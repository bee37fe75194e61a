// The PostgreSQL rows (bench:postgres), each run in a process of its own (../rows/rowChild.ts) on a
// table main.ts filled: the raw `pg` loop a careful user writes over a queue table of their own
// (one connection; per batch a transaction that claims and deletes `batch` rows with
// `FOR UPDATE SKIP LOCKED`, handles them, and commits, so a row is gone only once it was handled),
// and the full app (a RustStream app on PostgresBroker over the package's queue table, a
// PostgresQueue claiming the same number of rows at once, its handler typed `Order`, acked by the
// runtime). Both timed from the first order in hand to the last one settled.
import { RustStream } from "@ruststream/core";
import { PostgresBroker, PostgresQueue } from "@ruststream/postgres";
import pg from "pg";
import { type Drained, Tally } from "../kafka/tally.js";
import type { Order } from "../redis/drain/order.js";
import { drainWithApp } from "../rows/appDrain.js";
import { settingRows } from "../rows/settingRows.js";

/** One row's run: `count` orders in `table` (the app's: the package's table, under `queue`). */
export interface PostgresTrial {
  readonly url: string;
  readonly table: string;
  readonly queue: string;
  readonly count: number;
}

/**
 * Rows per claim in both rows: what a careful user drains a table in (a round trip per statement
 * costs more than the rows it moves below that), and within what the runtime pulls at once (256).
 * `raw:<n>` and `app:<n>` run either row with another.
 */
export const carefulBatch = 100;

async function rawLoop({ url, table, count }: PostgresTrial, batch: number): Promise<Drained> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const claim = {
      name: "claim",
      text: `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING id, payload`,
      values: [batch],
    };
    const tally = new Tally(count);
    while (tally.seen < count) {
      await client.query("BEGIN");
      const { rows } = await client.query<{ payload: Buffer }>(claim);
      for (const row of rows) tally.add(JSON.parse(row.payload.toString("utf8")) as Order);
      await client.query("COMMIT");
    }
    return tally.drained();
  } finally {
    await client.end();
  }
}

async function fullApp(
  { url, table, queue, count }: PostgresTrial,
  batch: number,
): Promise<Drained> {
  const tally = new Tally(count);
  const app = new RustStream({ name: "bench-postgres", version: "0" }).broker(
    new PostgresBroker({ url, table }),
    (b) => {
      b.subscriber<Order>(new PostgresQueue(queue, { claim: batch })).handle((order) => {
        tally.add(order);
      });
    },
  );
  return drainWithApp(app, tally);
}

export const postgresRows = settingRows<PostgresTrial>("batch", carefulBatch, {
  raw: { name: (n) => `raw pg SKIP LOCKED loop, ${n} a claim`, run: rawLoop },
  app: { name: (n) => `full app, claim ${n}`, run: fullApp },
});

/** The row module's entry (../rows/protocol.ts). */
export const runRow = postgresRows.runRow;

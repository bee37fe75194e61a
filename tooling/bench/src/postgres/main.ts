// PostgreSQL: a queue table of 512-byte JSON orders drained by the full app and by the raw `pg`
// SKIP LOCKED loop a careful user writes, on the PostgreSQL of tooling/brokers, rows interleaved
// over rounds, each row and round in a process of its own (../rows/drainRounds.ts), its peak memory
// measured.
//
//   pnpm --filter @ruststream/tooling-bench bench:postgres [count] [rounds] [rows] [file]
//
// rows: a comma list of rows.ts's keys (default raw,app); file: the results' name under results/
// (default postgres.json for count >= 100k and rounds >= 5, else postgres-quick.json).
// POSTGRES_URL picks the server; without it tooling/brokers starts its own. Before every drain a
// fresh table is made and filled with orders 0..count-1 (untimed): for the app the package's queue
// table (`schemaSql`), for the raw loop a table of an id and a payload. After it the table must be
// empty (every row settled), and is dropped.

import { schemaSql } from "@ruststream/postgres";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import pg from "pg";
import { orderBytes, orderPayload } from "../redis/drain/order.js";
import { sourceRevision } from "../revision.js";
import { drainArgs } from "../rows/drainArgs.js";
import { runDrainBench } from "../rows/drainRounds.js";
import { carefulBatch, type PostgresTrial, postgresRows } from "./rows.js";

const args = drainArgs("postgres", ["raw", "app"]);

if (process.env.POSTGRES_URL === undefined) await ensureBrokers(["postgres"]);
const url = process.env.POSTGRES_URL;
if (url === undefined) throw new Error("no PostgreSQL: set POSTGRES_URL, or start tooling/brokers");

const pool = new pg.Pool({ connectionString: url, max: 2 });
const queue = "orders";
/** Rows per INSERT of the fill. */
const fillBatch = 5_000;
let tables = 0;

async function fresh(key: string, messages: number): Promise<PostgresTrial> {
  const table = `bench_postgres_${process.pid}_${tables++}`;
  const app = key.startsWith("app");
  await pool.query(
    app
      ? schemaSql(table)
      : `CREATE TABLE ${table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload bytea NOT NULL)`,
  );
  for (let from = 0; from < messages; from += fillBatch) {
    const payloads: Buffer[] = [];
    for (let i = from; i < Math.min(messages, from + fillBatch); i++)
      payloads.push(orderPayload(i));
    await pool.query(
      app
        ? `INSERT INTO ${table} (queue, payload) SELECT $1, p FROM unnest($2::bytea[]) AS p`
        : `INSERT INTO ${table} (payload) SELECT p FROM unnest($1::bytea[]) AS p`,
      app ? [queue, payloads] : [payloads],
    );
  }
  // Fresh statistics, as a table that has been in use has them.
  await pool.query(`ANALYZE ${table}`);
  return { url: url!, table, queue, count: messages };
}

async function finish(where: string, { table }: PostgresTrial): Promise<void> {
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
  if (rows[0]!.n !== "0") throw new Error(`${where}: ${table} still holds ${rows[0]!.n} rows`);
  await pool.query(`DROP TABLE ${table}`);
}

const { rows: version } = await pool.query<{ server_version: string }>("SHOW server_version");
await runDrainBench<PostgresTrial>({
  title: `PostgreSQL ${version[0]!.server_version}, a queue table of ${orderBytes}-byte JSON orders`,
  scenario:
    "A pre-filled queue table of 512-byte JSON orders drained by the raw pg loop (a transaction per batch: DELETE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT n) RETURNING, JSON.parse, COMMIT) over a table of its own, and the full app (PostgresQueue over the package's table, the same claim size, typed handler, ack by the runtime); each row and round in a process of its own, its peak resident set measured",
  args,
  rowModule: new URL("./rows.ts", import.meta.url).href,
  rowName: postgresRows.name,
  pairs: [["app", "raw", 0.9]],
  fresh,
  finish,
  facts: {
    source: sourceRevision(["packages/core/src", "packages/postgres/src"]),
    server: version[0]!.server_version,
    orderBytes,
    batch: carefulBatch,
  },
});
await pool.end();

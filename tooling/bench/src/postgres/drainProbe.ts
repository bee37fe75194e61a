// PostgreSQL: where the full app's drain spends its round trips, counted at the client. One process
// fills a fresh queue table with `count` 512-byte orders (as bench:postgres does, untimed), then
// drains it with the full app (the bench's `app` row: PostgresQueue with `claim` rows a claim, on
// `workers` workers) through a `pg.Pool` that counts every statement the package sends, by its
// kind (claim, ack, renewal, nextDue, ...), with the time from send to answer. It prints the rate,
// this process's CPU per order, and per kind the statements per 1,000 orders and their mean time.
//
//   pnpm --filter @ruststream/tooling-bench bench:postgres-probe [count] [workers] [claim] [keyOrder]
//
// keyOrder: `on` (default) or `off`. PROBE_FILLFACTOR=<n> sets the table's fillfactor before the
// fill (room on each page for the claim's new row versions, so they can be HOT updates). Run it under `node --cpu-prof` for a profile of the same
// drain. POSTGRES_URL picks the server; without it tooling/brokers starts its own.

import { RustStream } from "@ruststream/core";
import { PostgresBroker, PostgresQueue, schemaSql } from "@ruststream/postgres";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import pg from "pg";
import { Tally } from "../kafka/tally.js";
import { type Order, orderPayload } from "../redis/drain/order.js";
import { drainWithApp } from "../rows/appDrain.js";

const [count = 20_000, workers = 1, claim = 100] = process.argv.slice(2, 5).map(Number);
const keyOrder = process.argv[5] !== "off";

if (process.env.POSTGRES_URL === undefined) await ensureBrokers(["postgres"]);
const url = process.env.POSTGRES_URL;
if (url === undefined) throw new Error("no PostgreSQL: set POSTGRES_URL, or start tooling/brokers");

/** A statement's kind, from its text: the package writes each kind's statement one way. */
function kindOf(text: string): string {
  if (text.startsWith("WITH RECURSIVE walk")) return "claim (key order)";
  if (text.startsWith("WITH locked AS")) return "claim (plain)";
  if (text.startsWith("DELETE FROM") && text.includes("unnest")) return "ack (delete)";
  if (text.startsWith("UPDATE") && text.includes("SET locked_until")) return "lease renewal";
  if (text.startsWith("SELECT EXTRACT(EPOCH")) return "nextDue";
  if (text.startsWith("WITH freed")) return "release";
  return text.slice(0, 40);
}

interface Counted {
  n: number;
  ms: number;
}

/** A pool that counts the statements going by, by kind, and their time to the answer. */
class Counting extends pg.Pool {
  readonly counted = new Map<string, Counted>();
  // biome-ignore lint/suspicious/noExplicitAny: pg's query is overloaded; this passes it through.
  override query(...args: any[]): any {
    const text: string = typeof args[0] === "string" ? args[0] : (args[0]?.text ?? "");
    const kind = kindOf(text);
    const began = performance.now();
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    const answer = (super.query as any)(...args) as Promise<unknown>;
    const note = () => {
      const c = this.counted.get(kind) ?? { n: 0, ms: 0 };
      c.n += 1;
      c.ms += performance.now() - began;
      this.counted.set(kind, c);
    };
    answer.then(note, note);
    return answer;
  }
}

const filler = new pg.Pool({ connectionString: url, max: 1 });
const table = `drain_probe_${process.pid}`;
const queue = "orders";
await filler.query(schemaSql(table));
if (process.env.PROBE_FILLFACTOR)
  await filler.query(
    `ALTER TABLE ${table} SET (fillfactor = ${Number(process.env.PROBE_FILLFACTOR)})`,
  );
for (let from = 0; from < count; from += 5_000) {
  const payloads: Buffer[] = [];
  for (let i = from; i < Math.min(count, from + 5_000); i++) payloads.push(orderPayload(i));
  await filler.query(
    `INSERT INTO ${table} (queue, payload) SELECT $1, p FROM unnest($2::bytea[]) AS p`,
    [queue, payloads],
  );
}
await filler.query(`ANALYZE ${table}`);

const pool = new Counting({ connectionString: url, max: 10, options: "-c jit=off" });
const tally = new Tally(count);
const app = new RustStream({ name: "bench-postgres-probe", version: "0" }).broker(
  new PostgresBroker({ pool, table }),
  (b) => {
    b.subscriber<Order>(new PostgresQueue(queue, { claim, keyOrder }))
      .workers(workers)
      .handle((order) => {
        tally.add(order);
      });
  },
);
const drained = await drainWithApp(app, tally);
const { rows: left } = await filler.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
await filler.query(`DROP TABLE ${table}`);
await filler.end();
await pool.end();
const expected = (BigInt(count) * BigInt(count - 1)) / 2n;
if (drained.messages !== count || drained.idSum !== expected || left[0]!.n !== "0") {
  throw new Error(
    `the drain is wrong: ${drained.messages} of ${count} orders, id sum ${drained.idSum} (expected ${expected}), ${left[0]!.n} rows left`,
  );
}

console.log(
  `${count} orders, ${workers} worker(s), claim ${claim}, keyOrder ${keyOrder ? "on" : "off"}: ${((count / drained.ms) * 1000).toFixed(0)}/s, CPU ${((drained.cpuMs * 1000) / count).toFixed(2)} µs per order`,
);
for (const [kind, c] of [...pool.counted].sort((a, b) => b[1].n - a[1].n)) {
  console.log(
    `  ${kind.padEnd(20)} ${((c.n * 1000) / count).toFixed(1).padStart(7)} per 1,000 orders, mean ${(c.ms / c.n).toFixed(2)} ms`,
  );
}

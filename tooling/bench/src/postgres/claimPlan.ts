// PostgreSQL: what a key-ordered claim costs over a backlog, read from the server's own plans
// (EXPLAIN (ANALYZE, BUFFERS), each in a transaction rolled back, so every run claims from the same
// rows): the claim statement the package sends now, and the one it sent before claims took a
// key's head and the rows behind it (kept below, as it was), side by side on the same tables.
//
//   pnpm --filter @ruststream/tooling-bench bench:postgres-claim-plan [rows] [keys] [repeats]
//
// Two backlogs of `rows` rows (default 50,000) in a fresh table each:
// - "behind their heads": `keys` keys (default 64), rows in turn; every key's head was retried, so
//   its run time is later than every row behind it, and a third of the heads are still delayed (as
//   `tooling/chaos`'s `postgres-queue-retry` left its table);
// - "a key per row": every row a key of its own, all ready;
// - "no keys": no row with a key, all ready;
// - "two per key, delayed": `rows / 2` keys of two rows, every head delayed, so nothing can be
//   claimed and the claim asks every key (its costliest case).
// POSTGRES_URL picks the server; without it tooling/brokers starts its own.

import { randomUUID } from "node:crypto";
import { PostgresBroker, PostgresQueue, schemaSql } from "@ruststream/postgres";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import pg from "pg";

const [rows = 50_000, keys = 64, repeats = 5] = process.argv.slice(2).map(Number);
const claim = 16;

if (process.env.POSTGRES_URL === undefined) await ensureBrokers(["postgres"]);
const url = process.env.POSTGRES_URL;
if (url === undefined) throw new Error("no PostgreSQL: set POSTGRES_URL, or start tooling/brokers");

/** A pool that keeps the text of the package's key-ordered claim as it goes by. */
class Recording extends pg.Pool {
  claimText: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: pg's query is overloaded; this passes it through.
  override query(...args: any[]): any {
    // A string, or the package's named statement ({ name, text, values }).
    const text: string | undefined = typeof args[0] === "string" ? args[0] : args[0]?.text;
    if (text?.startsWith("WITH RECURSIVE walk AS")) this.claimText = text;
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    return (super.query as any)(...args);
  }
}

const pool = new pg.Pool({ connectionString: url, max: 1 });
const table = `claim_plan_${process.pid}`;

/** The statement the package sends now, for `table`: read off the wire of one claim. */
async function currentClaim(): Promise<string> {
  const recording = new Recording({ connectionString: url, max: 2 });
  const connected = await new PostgresBroker({
    pool: recording,
    table,
    ensureSchema: true,
  }).connect();
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: "probe", payload: new Uint8Array([1]), partitionKey: "p" });
  const subscription = await connected.subscribe(new PostgresQueue("probe", { claim }));
  for (const delivery of await subscription.nextBatch(claim)) await delivery.ack();
  await connected.shutdown();
  await recording.end();
  if (recording.claimText === undefined) throw new Error("no key-ordered claim went by");
  return recording.claimText;
}

/** The key-ordered claim as the package sent it before (one row per key, heads found by a walk). */
const before = `WITH picked AS (
  SELECT q.id FROM "${table}" AS q
  WHERE q.queue = $1 AND q.done_at IS NULL AND q.run_at <= now()
    AND (q.locked_until IS NULL OR q.locked_until <= now())
    AND (NOT $5::boolean OR q.partition_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM "${table}" AS h
      WHERE h.queue = q.queue AND h.partition_key = q.partition_key AND h.done_at IS NULL AND h.id < q.id
        AND NOT COALESCE(h.lease = ANY($6::uuid[]) AND h.locked_until > now(), false)))
  ORDER BY q.priority DESC, q.run_at, q.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED)
UPDATE "${table}" AS q SET attempts = q.attempts + 1, lease = $3::uuid, locked_until = clock_timestamp() + $4::double precision * interval '1 millisecond'
FROM picked WHERE q.id = picked.id
RETURNING q.id::text AS id, q.queue, q.payload, q.header_names, q.header_values, q.partition_key,
  q.priority, q.run_at, q.attempts, q.dead_source, q.dead_reason, q.dead_attempts`;

const backlogs = {
  "behind their heads": async () => {
    await fill(`convert_to('k' || (i % ${keys}), 'UTF8')`);
    // Each key's head (ids 1..keys) was retried: due again after every row behind it, or a third
    // of them still delayed.
    await pool.query(
      `UPDATE "${table}" SET run_at = CASE WHEN id <= ${Math.ceil((keys * 2) / 3)} THEN now() - interval '1 second' ELSE now() + interval '1 hour' END WHERE id <= ${keys}`,
    );
  },
  "a key per row": () => fill("convert_to('k' || i, 'UTF8')"),
  "no keys": () => fill("NULL"),
  "two per key, delayed": async () => {
    await fill("convert_to('k' || (i / 2), 'UTF8')");
    // Every key's head delayed: no row is claimable, and every key must be asked.
    await pool.query(`UPDATE "${table}" SET run_at = now() + interval '1 hour' WHERE id % 2 = 1`);
  },
};

async function fill(key: string): Promise<void> {
  await pool.query(`TRUNCATE "${table}" RESTART IDENTITY`);
  await pool.query(
    `INSERT INTO "${table}" (queue, payload, partition_key, run_at) SELECT 'backlog', '\\x00'::bytea, ${key}, now() - interval '1 hour' + i * interval '1 millisecond' FROM generate_series(0, ${rows - 1}) AS i`,
  );
  await pool.query(`ANALYZE "${table}"`);
}

interface Measured {
  readonly ms: number[];
  readonly claimed: number;
  readonly buffers: number;
  readonly plan: string;
}

/**
 * The statement prepared, as the package's pool sends it (`pg`'s named statement): run six times
 * first, so PostgreSQL's plan cache has chosen between a plan for the values and its generic plan
 * (it decides after five), then measured as `EXECUTE`.
 */
let prepares = 0;

async function measurePrepared(text: string, values: unknown[]): Promise<Measured> {
  // A name of its own for each backlog: pg remembers which names it prepared on the connection.
  const name = `claim_plan_${prepares++}`;
  for (let i = 0; i < 6; i++) {
    await pool.query("BEGIN");
    await pool.query({ name, text, values });
    await pool.query("ROLLBACK");
  }
  const literals = values.map((v) =>
    Array.isArray(v) ? "'{}'::uuid[]" : typeof v === "string" ? `'${v}'` : String(v),
  );
  return measure(`EXECUTE ${name}(${literals.join(", ")})`, []);
}

async function measure(text: string, values: unknown[]): Promise<Measured> {
  const ms: number[] = [];
  let claimed = 0;
  let buffers = 0;
  let plan = "";
  for (let i = 0; i < repeats; i++) {
    await pool.query("BEGIN");
    const { rows: out } = await pool.query(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
      values,
    );
    await pool.query("ROLLBACK");
    const top = (
      out[0] as { "QUERY PLAN": [{ Plan: Record<string, number>; "Execution Time": number }] }
    )["QUERY PLAN"][0];
    ms.push(top["Execution Time"]);
    claimed = top.Plan["Actual Rows"] ?? 0;
    buffers = (top.Plan["Shared Hit Blocks"] ?? 0) + (top.Plan["Shared Read Blocks"] ?? 0);
  }
  await pool.query("BEGIN");
  const { rows: lines } = await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values);
  await pool.query("ROLLBACK");
  plan = lines.map((l) => (l as Record<string, string>)["QUERY PLAN"]).join("\n");
  return { ms, claimed, buffers, plan };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

await pool.query(schemaSql(table));
const after = await currentClaim();
const { rows: version } = await pool.query<{ server_version: string }>("SHOW server_version");
console.log(
  `PostgreSQL ${version[0]!.server_version}; ${rows} rows; claim ${claim}; ${repeats} runs each; Execution Time in ms (median, min-max)`,
);
const plans: string[] = [];
for (const [name, build] of Object.entries(backlogs)) {
  await build();
  const lease = randomUUID();
  const old = await measure(before, ["backlog", claim, lease, 30_000, true, []]);
  const now = await measure(after, ["backlog", claim, lease, 30_000, [], claim]);
  const cached = await measurePrepared(after, ["backlog", claim, lease, 30_000, [], claim]);
  for (const [label, m] of [
    ["before", old],
    ["after", now],
    ["after, prepared", cached],
  ] as const) {
    console.log(
      `${name.padEnd(20)} ${label.padEnd(15)} ${median(m.ms).toFixed(2).padStart(9)} ms (${Math.min(...m.ms).toFixed(2)}-${Math.max(...m.ms).toFixed(2)})  ${String(m.claimed).padStart(3)} rows claimed  ${m.buffers} buffers`,
    );
    plans.push(`--- ${name}, ${label}\n${m.plan}`);
  }
}
if (process.env.CLAIM_PLAN_PRINT === "1") console.log(plans.join("\n\n"));
await pool.query(`DROP TABLE "${table}"`);
await pool.end();

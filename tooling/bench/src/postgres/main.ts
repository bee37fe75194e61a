// PostgreSQL: 512-byte JSON orders drained from the PostgreSQL of tooling/brokers by the raw `pg`
// SKIP LOCKED loop a careful user writes, the full app, pg-boss and graphile-worker, each with 1
// and 8 workers, and relayed from the package's outbox to Redis; rows interleaved over rounds, each
// row and round in a process of its own (../rows/drainRounds.ts), its peak memory measured.
//
//   pnpm --filter @ruststream/tooling-bench bench:postgres [count] [rounds] [rows] [file]
//
// rows: a comma list of rows.ts's keys (default: all of `defaultRows`); file: the results' name
// under results/ (default postgres.json for count >= 100k and rounds >= 5, else
// postgres-quick.json). POSTGRES_URL (and REDIS_URL, for the relay) pick the servers; without them
// tooling/brokers starts its own. Before every drain a fresh queue is made and filled with orders
// 0..count-1 (untimed), each by its own library's bulk insert: for the app the package's queue
// table (`schemaSql`), for the raw loop a table of an id and a payload, for pg-boss a queue
// (`insert`) in its schema, for graphile-worker a task's jobs (`addJobs`) in its schema, for the
// relay an outbox table written in transactions. After it every order must be settled once, and the
// queue is dropped. POSTGRES_AT=<git ref> names the package's commit the `stormat`,
// `stormspreadat` and `redriveat` rows run (rows.ts); the command and the facts record it.

import { schemaSql } from "@ruststream/postgres";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import pg from "pg";
import { orderBytes, orderPayload } from "../redis/drain/order.js";
import { sourceRevision } from "../revision.js";
import { drainArgs } from "../rows/drainArgs.js";
import { type AppAgainstRaw, runDrainBench } from "../rows/drainRounds.js";
import { checkGraphile, fillGraphile, graphileFiller, graphileSchema } from "./graphile.js";
import { checkPgBoss, fillPgBoss, pgBossFiller, pgBossSchema } from "./pgBoss.js";
import { checkRelay, fillOutbox } from "./relay.js";
import { carefulBatch, deadLetterQueues, postgresRows } from "./rows.js";
import type { PostgresTrial, TableTrial } from "./trial.js";

const defaultRows = [
  "raw",
  "app",
  "pgboss",
  "graphile",
  "raw-8",
  "app-8",
  "pgboss-8",
  "graphile-8",
  "graphile:500",
  "graphile-8:500",
  "relay",
];
const args = drainArgs("postgres", defaultRows);
const kinds = new Set(args.chosen.map((key) => postgresRows.kind(key)));

if (process.env.POSTGRES_URL === undefined) await ensureBrokers(["postgres"]);
if (kinds.has("relay") && process.env.REDIS_URL === undefined) await ensureBrokers(["redis"]);
const url = process.env.POSTGRES_URL;
if (url === undefined) throw new Error("no PostgreSQL: set POSTGRES_URL, or start tooling/brokers");
const redisUrl = process.env.REDIS_URL ?? "";

const pool = new pg.Pool({ connectionString: url, max: 2 });
const boss = kinds.has("pgboss") ? await pgBossFiller(url) : undefined;
const graphile = kinds.has("graphile") ? await graphileFiller(url) : undefined;
const redis = kinds.has("relay") ? new Redis(redisUrl) : undefined;
const queue = "orders";
/** Rows per INSERT of the tables' fill. */
const fillBatch = 5_000;
let made = 0;

async function fillTable(key: string, messages: number, table: string): Promise<TableTrial> {
  // Every table row but the raw loop's drains the package's queue table.
  const app = !key.startsWith("raw");
  await pool.query(
    app
      ? schemaSql(table)
      : `CREATE TABLE ${table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload bytea NOT NULL)`,
  );
  for (let from = 0; from < messages; from += fillBatch) {
    const payloads: Buffer[] = [];
    for (let i = from; i < Math.min(messages, from + fillBatch); i++)
      payloads.push(orderPayload(i));
    if (key.startsWith("redrive")) {
      // Dead letters from `queue`, spread over the dead letter queues the row redrives.
      await pool.query(
        `INSERT INTO ${table} (queue, payload, dead_source, dead_reason, dead_attempts)
         SELECT ($3::text[])[1 + (n % cardinality($3::text[]))], p, $1, 'bench', 1
         FROM unnest($2::bytea[]) WITH ORDINALITY AS u(p, n)`,
        [queue, payloads, deadLetterQueues(queue)],
      );
      continue;
    }
    await pool.query(
      app
        ? `INSERT INTO ${table} (queue, payload) SELECT $1, p FROM unnest($2::bytea[]) AS p`
        : `INSERT INTO ${table} (payload) SELECT p FROM unnest($1::bytea[]) AS p`,
      app ? [queue, payloads] : [payloads],
    );
  }
  // Fresh statistics, as a table that has been in use has them.
  await pool.query(`ANALYZE ${table}`);
  return { kind: "table", url: url!, table, queue, count: messages };
}

async function fresh(key: string, messages: number): Promise<PostgresTrial> {
  const name = `bench_postgres_${process.pid}_${made++}`;
  switch (postgresRows.kind(key)) {
    case "table":
      return fillTable(key, messages, name);
    case "pgboss": {
      const trial = {
        kind: "pgboss",
        url: url!,
        schema: pgBossSchema,
        queue: name,
        count: messages,
      } as const;
      await fillPgBoss(boss!, trial);
      return trial;
    }
    case "graphile": {
      const trial = {
        kind: "graphile",
        url: url!,
        schema: graphileSchema,
        task: name,
        count: messages,
      } as const;
      await fillGraphile(graphile!, trial);
      return trial;
    }
    case "relay": {
      const trial = {
        kind: "relay",
        url: url!,
        redisUrl,
        table: name,
        label: "redis",
        stream: `${name}_orders`,
        count: messages,
      } as const;
      await fillOutbox(pool, trial);
      return trial;
    }
  }
}

async function finish(where: string, trial: PostgresTrial): Promise<void> {
  switch (trial.kind) {
    case "table": {
      const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${trial.table}`);
      if (rows[0]!.n !== "0")
        throw new Error(`${where}: ${trial.table} still holds ${rows[0]!.n} rows`);
      await pool.query(`DROP TABLE ${trial.table}`);
      return;
    }
    case "pgboss":
      return checkPgBoss(pool, boss!, where, trial);
    case "graphile":
      return checkGraphile(pool, where, trial);
    case "relay":
      return checkRelay(pool, redis!, where, trial);
  }
}

/**
 * Each app row against the rows of the same workers: the raw loop (0.9), pg-boss (2), and
 * graphile-worker (1) at its docs' starting point and at its load test's local queue of 500.
 */
const pairs: AppAgainstRaw[] = ["", "-8"].flatMap((w): AppAgainstRaw[] => [
  [`app${w}`, `raw${w}`, 0.9],
  [`app${w}`, `pgboss${w}`, 2, false],
  [`app${w}`, `graphile${w}`, 1, false],
  [`app${w}`, `graphile${w}:500`, 1, false],
  // The retry storm and the redrive now over the package at POSTGRES_AT: no target (issue 43 sets none).
  [`storm${w}`, `stormat${w}`, undefined, false],
  [`stormspread${w}`, `stormspreadat${w}`, undefined, false],
  [`redrive${w}`, `redriveat${w}`, undefined, false],
]);
const postgresAt = process.env.POSTGRES_AT || undefined;

const { rows: version } = await pool.query<{ server_version: string }>("SHOW server_version");
try {
  await runDrainBench<PostgresTrial>({
    title: `PostgreSQL ${version[0]!.server_version}, a queue of ${orderBytes}-byte JSON orders`,
    scenario:
      "A pre-filled queue of 512-byte JSON orders drained by the raw pg loop (a transaction per batch: DELETE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT n) RETURNING, JSON.parse, COMMIT; a connection per worker) over a table of its own, the full app (PostgresQueue over the package's table, the same claim size, typed handler on n workers, ack by the runtime), pg-boss (work() with batchSize, localConcurrency, burstWhenBatchFull) and graphile-worker (run() with concurrency, a local queue of concurrency + 1 or of 500, completions batched over 25 ms), each filled by its own bulk insert in its own schema; the package's outbox relay publishing orders committed to its outbox table to a Redis stream; and a retry storm, the full app answering each order's first attempt with retryAfter(10) (or 10 ms plus the order's id mod 100) and counting its second, and a redrive of the orders as dead letters in 10 dead letter queues at once to the full app, on this tree's package and on the package at POSTGRES_AT; each row and round in a process of its own, its peak resident set measured",
    args: {
      ...args,
      command: `${postgresAt === undefined ? "" : `POSTGRES_AT=${postgresAt} `}${args.command}`,
    },
    rowModule: new URL("./rows.ts", import.meta.url).href,
    rowName: postgresRows.name,
    pairs,
    against: {
      heading:
        "full app / raw loop, pg-boss, graphile-worker; retry storm, redrive / the same at POSTGRES_AT",
      bounded: true,
    },
    fresh,
    finish,
    facts: {
      source: sourceRevision(["packages/core/src", "packages/postgres/src"]),
      server: version[0]!.server_version,
      orderBytes,
      batch: carefulBatch,
      pgBoss: "12.38.1",
      graphileWorker: "0.18.0",
      ...(postgresAt === undefined ? {} : { postgresAt }),
    },
  });
} finally {
  await boss?.stop({ graceful: false });
  await graphile?.release();
  redis?.disconnect();
  await pool.end();
}

// The PostgreSQL rows (bench:postgres), each run in a process of its own (../rows/rowChild.ts) on
// what main.ts filled for it, each drained by `workers` at once: the raw `pg` loop a careful user
// writes over a queue table of their own (a connection per worker; per batch a transaction that
// claims and deletes `batch` rows with `FOR UPDATE SKIP LOCKED`, handles them, and commits, so a
// row is gone only once it was handled); the full app (a RustStream app on PostgresBroker over the
// package's queue table, a PostgresQueue claiming `batch` rows at once, its handler typed `Order`
// on `workers` workers, acked by the runtime); pg-boss and graphile-worker (./pgBoss.ts,
// ./graphile.ts); and the outbox relay (./relay.ts). Each timed from the first order in hand to the
// last one settled.
//
// A row's key: `raw`, `app`, `appnoorder` (keyOrder off), `pgboss`, `graphile` or `relay`, then `-<workers>` (default 1), then
// `:<batch>` (rows a claim, default 100; for graphile-worker its local queue, default workers + 1;
// not for the relay, at its defaults): `app-8`, `raw-8:200`, `graphile-8:500`.
import { RustStream } from "@ruststream/core";
import { PostgresBroker, PostgresQueue } from "@ruststream/postgres";
import pg from "pg";
import { type Drained, Tally } from "../kafka/tally.js";
import type { Order } from "../redis/drain/order.js";
import { drainWithApp } from "../rows/appDrain.js";
import { drainGraphile } from "./graphile.js";
import { drainPgBoss } from "./pgBoss.js";
import { relayOutbox } from "./relay.js";
import type {
  GraphileTrial,
  PgBossTrial,
  PostgresTrial,
  RelayTrial,
  TableTrial,
  TrialKind,
} from "./trial.js";

/**
 * Rows per claim: what a careful user drains a table in (a round trip per statement costs more
 * than the rows it moves below that), and within what the runtime pulls at once (256).
 */
export const carefulBatch = 100;

async function rawLoop(
  { url, table, count }: TableTrial,
  workers: number,
  batch: number,
): Promise<Drained> {
  const clients = Array.from({ length: workers }, () => new pg.Client({ connectionString: url }));
  await Promise.all(clients.map((client) => client.connect()));
  try {
    const claim = {
      name: "claim",
      text: `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING id, payload`,
      values: [batch],
    };
    const tally = new Tally(count);
    await Promise.all(
      clients.map(async (client) => {
        while (tally.seen < count) {
          await client.query("BEGIN");
          const { rows } = await client.query<{ payload: Buffer }>(claim);
          for (const row of rows) tally.add(JSON.parse(row.payload.toString("utf8")) as Order);
          await client.query("COMMIT");
        }
      }),
    );
    return tally.drained();
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

async function fullApp(
  { url, table, queue, count }: TableTrial,
  workers: number,
  batch: number,
  keyOrder = true,
): Promise<Drained> {
  const tally = new Tally(count);
  const app = new RustStream({ name: "bench-postgres", version: "0" }).broker(
    new PostgresBroker({ url, table }),
    (b) => {
      b.subscriber<Order>(new PostgresQueue(queue, { claim: batch, keyOrder }))
        .workers(workers)
        .handle((order) => {
          tally.add(order);
        });
    },
  );
  return drainWithApp(app, tally);
}

interface PostgresRow {
  readonly kind: TrialKind;
  /** What `:<batch>` means when the key gives none (`undefined`: it gives none). */
  readonly batch?: (workers: number) => number;
  readonly name: (workers: number, batch: number) => string;
  readonly run: (trial: PostgresTrial, workers: number, batch: number) => Promise<Drained>;
}

const on = (workers: number) => (workers === 1 ? "1 worker" : `${workers} workers`);

const rows: Readonly<Record<string, PostgresRow>> = {
  raw: {
    kind: "table",
    batch: () => carefulBatch,
    name: (w, n) =>
      `raw pg SKIP LOCKED loop, ${n} a claim, ${w === 1 ? "1 connection" : `${w} connections`}`,
    run: (trial, w, n) => rawLoop(trial as TableTrial, w, n),
  },
  app: {
    kind: "table",
    batch: () => carefulBatch,
    name: (w, n) => `full app, claim ${n}, ${on(w)}`,
    run: (trial, w, n) => fullApp(trial as TableTrial, w, n),
  },
  // The app with the plain claim (`keyOrder: false`), which takes no notice of keys: what the
  // key-ordered claim statement costs the drain, measured beside it (the queue has no keys).
  appnoorder: {
    kind: "table",
    batch: () => carefulBatch,
    name: (w, n) => `full app, keyOrder off, claim ${n}, ${on(w)}`,
    run: (trial, w, n) => fullApp(trial as TableTrial, w, n, false),
  },
  pgboss: {
    kind: "pgboss",
    batch: () => carefulBatch,
    name: (w, n) => `pg-boss, batchSize ${n}, localConcurrency ${w}`,
    run: (trial, w, n) => drainPgBoss(trial as PgBossTrial, w, n),
  },
  graphile: {
    kind: "graphile",
    batch: (workers) => workers + 1,
    name: (w, n) => `graphile-worker, concurrency ${w}, local queue ${n}`,
    run: (trial, w, n) => drainGraphile(trial as GraphileTrial, w, n),
  },
  relay: {
    kind: "relay",
    name: () => "outbox relay to Redis, its defaults",
    run: (trial) => relayOutbox(trial as RelayTrial),
  },
};

function parse(key: string): [PostgresRow, number, number] {
  const match = /^([a-z]+)(?:-(\d+))?(?::(\d+))?$/.exec(key);
  const row = match === null ? undefined : rows[match[1]!];
  const workers = Number(match?.[2] ?? 1);
  const batch = Number(match?.[3] ?? row?.batch?.(workers) ?? 0);
  const fits =
    row !== undefined &&
    workers >= 1 &&
    (row.batch === undefined
      ? match?.[2] === undefined && match?.[3] === undefined
      : Number.isInteger(batch) && batch >= 1);
  if (!fits) {
    throw new Error(
      `unknown row "${key}": raw, app, appnoorder, pgboss or graphile, then -<workers> and :<batch>; or relay`,
    );
  }
  return [row, workers, batch];
}

export const postgresRows = {
  name(key: string): string {
    const [row, workers, batch] = parse(key);
    return row.name(workers, batch);
  },
  /** What main.ts fills for the row. */
  kind(key: string): TrialKind {
    return parse(key)[0].kind;
  },
};

/** The row module's entry (../rows/protocol.ts). */
export function runRow(key: string, trial: unknown): Promise<Drained> {
  const [row, workers, batch] = parse(key);
  return row.run(trial as PostgresTrial, workers, batch);
}

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
// The retry storm (`storm`): the full app whose handler answers every order's first attempt with
// `retryAfter(10)` and counts its second, timed from the first order in hand to the last one
// settled on its second attempt (`stormspread`: each order of a claim delayed 10 ms plus its id mod
// 100, so each retry is a statement of its own); `stormat` is the same on `@ruststream/postgres` as the git ref in
// POSTGRES_AT had it (../packageAt.ts, this tree's core and pg), for the settles' wake-ups timed
// before and after their change in one run. The redrive (`redrive`, `redriveat` likewise): the
// orders wait as dead letters spread over `deadLetterQueues` (main.ts fills them), the full app
// subscribed to their source, and one connection redrives every dead letter queue at once, timed
// from the redrives' start to the last order handled.
//
// A row's key: `raw`, `app`, `appnoorder` (keyOrder off), `storm`, `stormspread`, `redrive` (each also with `at` after it), `pgboss`, `graphile` or `relay`, then `-<workers>` (default 1), then
// `:<batch>` (rows a claim, default 100; for graphile-worker its local queue, default workers + 1;
// not for the relay, at its defaults): `app-8`, `raw-8:200`, `graphile-8:500`.
import { type Handler, RustStream, retryAfter } from "@ruststream/core";
import * as thisTree from "@ruststream/postgres";
import pg from "pg";
import { type Drained, Tally } from "../kafka/tally.js";
import { packageAt } from "../packageAt.js";
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
  trial: TableTrial,
  workers: number,
  batch: number,
  keyOrder = true,
): Promise<Drained> {
  const tally = new Tally(trial.count);
  const app = benchApp(thisTree, trial, workers, { claim: batch, keyOrder }, (order) => {
    tally.add(order);
  });
  return drainWithApp(app, tally);
}

type PostgresModule = typeof thisTree;

/** The full app the rows drain with: one PostgresQueue on `workers` workers, handled by `handle`. */
function benchApp(
  postgres: PostgresModule,
  { url, table, queue }: TableTrial,
  workers: number,
  options: { readonly claim: number; readonly keyOrder?: boolean },
  handle: Handler<Order, never, Record<never, never>, thisTree.PostgresPublishOptions>,
): RustStream {
  return new RustStream({ name: "bench-postgres", version: "0" }).broker(
    new postgres.PostgresBroker({ url, table }),
    (b) => {
      b.subscriber<Order>(new postgres.PostgresQueue(queue, options))
        .workers(workers)
        .handle(handle);
    },
  );
}

/** The retry storm's delay: short, so the settles' statements and wake-ups are what it times. */
export const stormDelayMs = 10;

/** The git ref of POSTGRES_AT, for the rows whose key ends in `at`; a clear error where it is not set. */
function postgresAt(): string {
  const ref = process.env.POSTGRES_AT || undefined;
  if (ref === undefined) {
    throw new Error(
      "the stormat, stormspreadat and redriveat rows need POSTGRES_AT=<git ref>: the package's commit to run",
    );
  }
  return ref;
}

/** The dead letter queues the redrive rows' orders wait in, all from `queue`. */
export function deadLetterQueues(queue: string): string[] {
  return Array.from({ length: 10 }, (_, i) => `${queue}.dead-${i}`);
}

async function redriveStorm(
  trial: TableTrial,
  workers: number,
  batch: number,
  postgres: PostgresModule,
): Promise<Drained> {
  const { url, table, queue, count } = trial;
  const tally = new Tally(count);
  const app = benchApp(postgres, trial, workers, { claim: batch }, (order) => {
    tally.add(order);
  });
  const redriving = await new postgres.PostgresBroker({ url, table }).connect();
  try {
    const running = await app.start();
    tally.begin();
    const moved = await Promise.all(deadLetterQueues(queue).map((d) => redriving.redrive(d)));
    const total = moved.reduce((sum, n) => sum + n, 0);
    if (total !== count) throw new Error(`the redrives moved ${total} of ${count} dead letters`);
    await tally.done;
    await running.whenIdle();
    const drained = tally.drained();
    await running.stop();
    return drained;
  } finally {
    await redriving.shutdown();
  }
}

async function retryStorm(
  trial: TableTrial,
  workers: number,
  batch: number,
  postgres: PostgresModule,
  delayOf: (order: Order) => number,
): Promise<Drained> {
  const tally = new Tally(trial.count);
  const app = benchApp(postgres, trial, workers, { claim: batch }, (order, ctx) => {
    tally.begin();
    if (ctx.attempt === 1) return retryAfter(delayOf(order));
    // A later attempt counted too: an order handled twice fails the bench's count and sum.
    tally.add(order);
    return undefined;
  });
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

type PackageRun = (
  trial: TableTrial,
  workers: number,
  batch: number,
  postgres: PostgresModule,
) => Promise<Drained>;

/** A row on this tree's package, and the same on the package at POSTGRES_AT (its key + `at`). */
function nowAndAt(
  what: (workers: number, batch: number) => string,
  run: PackageRun,
): [PostgresRow, PostgresRow] {
  const row = (at: boolean): PostgresRow => ({
    kind: "table",
    batch: () => carefulBatch,
    name: (w, n) => (at ? `${what(w, n)}, the package at ${postgresAt()}` : what(w, n)),
    run: async (trial, w, n) =>
      run(
        trial as TableTrial,
        w,
        n,
        at ? (await packageAt<PostgresModule>("postgres", postgresAt())).module : thisTree,
      ),
  });
  return [row(false), row(true)];
}

const [storm, stormat] = nowAndAt(
  (w, n) => `retry storm, each order retried once after ${stormDelayMs} ms, claim ${n}, ${on(w)}`,
  (trial, w, n, postgres) => retryStorm(trial, w, n, postgres, () => stormDelayMs),
);
// A delay of its own for each order of a claim: the settles of one turn go as one statement per
// delay, so here each retry is a statement (and, before the change, a pg_notify) of its own.
const [stormspread, stormspreadat] = nowAndAt(
  (w, n) =>
    `retry storm, each order retried once after ${stormDelayMs}-${stormDelayMs + carefulBatch - 1} ms (its id mod ${carefulBatch} more), claim ${n}, ${on(w)}`,
  (trial, w, n, postgres) =>
    retryStorm(trial, w, n, postgres, (order) => stormDelayMs + (order.id % carefulBatch)),
);
const [redrive, redriveat] = nowAndAt(
  (w, n) => `redrive of 10 dead letter queues at once, claim ${n}, ${on(w)}`,
  redriveStorm,
);

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
  storm,
  stormat,
  stormspread,
  stormspreadat,
  redrive,
  redriveat,
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
      `unknown row "${key}": raw, app, appnoorder, storm, stormspread, redrive (each also with at), pgboss or graphile, then -<workers> and :<batch>; or relay`,
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

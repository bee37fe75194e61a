import { type BacklogCounts, RustStreamError } from "@ruststream/core";
import { statements } from "../schema.js";
import type { QueueTable } from "../table.js";
import { claimStatements } from "./claimStatements.js";
import type { PostgresDriver, Queryable, QueryResult } from "./driver.js";
import { headerArrays, plain } from "./headerArrays.js";
import { type Prepared, prepared } from "./prepared.js";
import type {
  Claim,
  ClaimedRow,
  Held,
  HeldTransaction,
  NewRow,
  QueueStore,
  Settle,
} from "./store.js";
import { WakeSender } from "./wakeSender.js";

/**
 * `$n` milliseconds from now, as a timestamp. The clock's time, not the transaction's start
 * (`now()`): a settle in a transactional handler's transaction, or an insert in a caller's, runs
 * long after its transaction began.
 */
const after = (n: number) =>
  `clock_timestamp() + $${n}::double precision * interval '1 millisecond'`;
/** The rows a settle names, matched by id and lease: a row whose lease ended is not among them. */
const heldRows = "unnest($1::bigint[], $2::uuid[]) AS s(id, lease)";
const fenced = "q.id = s.id AND q.lease = s.lease";
const unleased = "lease = NULL, locked_until = NULL";
/** How many done rows one purge statement deletes at most. */
const purgeBatch = 1000;
/**
 * How long the server may spend on one backlog count before it cancels it (`statement_timeout`):
 * the count reads every undone row of its queue, and a scrape that stopped waiting must not leave
 * the server scanning a queue of millions of rows, one scan more at each scrape.
 */
export const backlogStatementMs = 1000;

/** The queue table over the seam: every statement of the queue, written once. */
export class SqlStore implements QueueStore {
  readonly #driver: PostgresDriver;
  readonly #t: QueueTable;
  readonly #sql: ReturnType<typeof statementsFor>;
  readonly #wakes: WakeSender;
  readonly #backlogMs: number;
  /** Holds not reserved yet: the driver's connections less the one kept for statements. */
  #holdsLeft: number;

  private constructor(driver: PostgresDriver, table: QueueTable, backlogMs: number) {
    this.#driver = driver;
    this.#backlogMs = backlogMs;
    this.#t = table;
    this.#sql = statementsFor(table);
    this.#holdsLeft = Math.max(0, driver.connections - 1);
    // One statement at a time on the pool: it holds one connection for its commit at most.
    this.#wakes = new WakeSender((queues) => this.#run(this.#sql.wake, [this.#t.channel, queues]));
  }

  /**
   * The store on `table`: created first when `ensureSchema` (under an advisory lock, so replicas
   * starting together do not race), else checked to exist. `backlogMs`: the server's limit on a
   * backlog count (a test gives a short one).
   */
  static async open(
    driver: PostgresDriver,
    table: QueueTable,
    ensureSchema: boolean,
    backlogMs: number = backlogStatementMs,
  ): Promise<SqlStore> {
    if (ensureSchema) {
      await driver.transaction(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [table.name]);
        for (const statement of statements(table)) await tx.query(statement);
      });
    } else {
      const found = await driver.query("SELECT to_regclass($1) IS NOT NULL AS found", [table.sql]);
      if (found.rows[0]?.found !== true) {
        throw new RustStreamError(
          "invalid-argument",
          `the queue table ${table.name} does not exist: pass ensureSchema: true to PostgresBroker to create it, or run the SQL of schemaSql(${JSON.stringify(table.name)}) in a migration`,
        );
      }
    }
    return new SqlStore(driver, table, backlogMs);
  }

  /**
   * In a caller's transaction (`via`) the insert notifies in that transaction, so only its commit
   * wakes anyone. Otherwise it commits without notifying and the wake-up follows, coalesced
   * (`wakeSender.ts`): a notifying commit waits for every other one in the database.
   */
  async insert(rows: readonly NewRow[], via?: Queryable): Promise<void> {
    if (rows.length === 0) return;
    if (rows.length === 1 && via === undefined) return this.#insertOne(rows[0]!);
    const values = rows.flatMap(insertValues);
    if (via !== undefined) {
      values.push(this.#t.channel);
      await via.query(
        `${insertRows(this.#t, rows.length)} SELECT pg_notify($${values.length}, w.queue) FROM (SELECT DISTINCT queue FROM ins) AS w`,
        values,
      );
      return;
    }
    // A transaction's rows, in one statement: their number varies, so it goes by its text.
    const result = await this.#driver.query(
      `${insertRows(this.#t, rows.length)} ${insertedQueues}`,
      values,
    );
    this.#wakes.wake(queuesOf(result));
  }

  /**
   * A publish's row on the pool, prepared (its text alone was parsed and planned at every call).
   * Without a dedupKey no conflict can drop it: a plain INSERT, which answers nothing.
   */
  async #insertOne(row: NewRow): Promise<void> {
    if (row.dedupKey === undefined) {
      await this.#run(this.#sql.insertOne, insertValues(row));
      this.#wakes.wake([row.queue]);
    } else {
      this.#wakes.wake(queuesOf(await this.#run(this.#sql.insertOneDeduped, insertValues(row))));
    }
  }

  async claim(claim: Claim): Promise<ClaimedRow[]> {
    const head = [claim.queue, claim.max, claim.lease, claim.leaseMs];
    const result = claim.keyOrder
      ? await this.#run(this.#sql.keyOrdered, [
          ...head,
          claim.own.map((h) => h.id.toString()),
          Math.min(claim.perKey, claim.max),
          claim.own.map((h) => h.lease),
        ])
      : await this.#run(this.#sql.plain, head);
    // UPDATE ... RETURNING keeps no order: each row says its place in the claim.
    return result.rows
      .map((row) => ({ row, pos: Number(row.pos) }))
      .sort((a, b) => a.pos - b.pos)
      .map(({ row }) => claimedRow(row));
  }

  /**
   * On the pool the settle commits without notifying and the wake-up of the queues it gave rows
   * back to follows, coalesced with the publishes' (`wakeSender.ts`), as `insert`'s does.
   */
  settle(held: readonly Held[], settle: Settle): Promise<Set<bigint>> {
    const on: SettleOn = {
      run: (s, values) => this.#run(s, values),
      wake: (queues) => this.#wakes.wake(queues),
    };
    return settleOn(on, this.#sql, this.#t, held, settle);
  }

  async extend(held: readonly Held[], leaseMs: number): Promise<Set<bigint>> {
    if (held.length === 0) return new Set();
    return ids(await this.#run(this.#sql.extend, [...heldParams(held), leaseMs]));
  }

  async nextDue(queue: string): Promise<number | undefined> {
    const result = await this.#run(this.#sql.nextDue, [queue]);
    const ms = result.rows[0]?.ms;
    return ms === null || ms === undefined ? undefined : Math.max(0, Math.ceil(Number(ms)));
  }

  /**
   * In a transaction of its own, whose `statement_timeout` bounds the count on the server (a
   * count cancelled there rejects with the server's `57014`).
   */
  async backlog(
    queue: string,
    deadLetter: string | undefined,
    cap: number,
  ): Promise<BacklogCounts> {
    const result = await this.#driver.transaction(async (tx) => {
      await tx.query(`SET LOCAL statement_timeout = ${Math.ceil(this.#backlogMs)}`);
      return tx.query(this.#sql.backlog, [queue, deadLetter ?? null, cap]);
    });
    const row = result.rows[0] ?? {};
    return {
      ready: Number(row.ready ?? 0),
      scheduled: Number(row.scheduled ?? 0),
      leased: Number(row.leased ?? 0),
      ...(deadLetter === undefined ? {} : { "dead-lettered": Number(row.dead ?? 0) }),
    };
  }

  /** One of the queue's own statements on the pool: prepared where the driver can. */
  #run(statement: Prepared, values: unknown[]): Promise<QueryResult> {
    return this.#driver.prepared?.(statement, values) ?? this.#driver.query(statement.text, values);
  }

  /**
   * Redrives run on the pool only, so the move commits without notifying and the queues it gave
   * rows back to are woken after, coalesced with the publishes' and settles' (`wakeSender.ts`).
   */
  async redrive(deadLetter: string, source: string | undefined): Promise<number> {
    const result = await this.#driver.query(this.#sql.redrive, [deadLetter, source ?? null]);
    this.#wakes.wake(queuesOf(result));
    return result.rows.reduce((sum, row) => sum + Number(row.moved), 0);
  }

  async purgeDone(olderThanMs: number): Promise<number> {
    let purged = 0;
    for (;;) {
      const result = await this.#driver.query(this.#sql.purge, [olderThanMs]);
      const n = Number(result.rows[0]?.purged ?? 0);
      purged += n;
      if (n < purgeBatch) return purged;
    }
  }

  async purgeQueue(queue: string): Promise<number> {
    const result = await this.#driver.query(this.#sql.purgeQueue, [queue]);
    return Number(result.rows[0]?.purged ?? 0);
  }

  async listen(events: {
    wake(queue: string): void;
    lost(reason: string): void;
    restored(): void;
  }): Promise<() => Promise<void>> {
    const listening = await this.#driver.listen(this.#t.channel, {
      notified: (queue) => events.wake(queue),
      lost: (reason) => events.lost(reason),
      restored: () => events.restored(),
    });
    return () => listening.close();
  }

  reserveHolds(want: number): number {
    const got = Math.min(want, this.#holdsLeft);
    this.#holdsLeft -= got;
    return got;
  }

  returnHolds(count: number): void {
    this.#holdsLeft += count;
  }

  hold(held: Held): Promise<HeldTransaction | undefined> {
    const table = this.#t;
    const sql = this.#sql;
    return new Promise((resolve, reject) => {
      let handedOut = false;
      const done = this.#driver.transaction(async (tx) => {
        const locked = await tx.query(
          `SELECT 1 FROM ${table.sql} WHERE id = $1 AND lease = $2 FOR UPDATE`,
          [held.id, held.lease],
        );
        if (locked.rows.length === 0) return resolve(undefined);
        await tx.query("SAVEPOINT ruststream_handler");
        const finish = deferred<{ settle: Settle; undo: boolean } | undefined>();
        handedOut = true;
        resolve({
          tx,
          settle: async (settle, undo) => {
            finish.resolve({ settle, undo });
            return (await done) === true;
          },
          abandon: async () => {
            finish.resolve(undefined);
            await done.catch(() => {});
          },
        });
        const how = await finish.promise;
        if (how === undefined) throw abandoned;
        if (how.undo) await tx.query("ROLLBACK TO SAVEPOINT ruststream_handler");
        // Its wake-up is in its statement, so only the transaction's commit wakes anyone.
        const settled = await settleOn(
          { run: (s, values) => tx.query(s.text, values), wake: undefined },
          sql,
          table,
          [held],
          how.settle,
        );
        // The row is locked by this transaction, so its lease cannot have moved; checked anyway.
        if (!settled.has(held.id)) throw abandoned;
        return true;
      });
      done.catch((error: unknown) => {
        if (!handedOut) reject(error);
      });
      // The connection is back in the pool once the transaction ends, however it ends.
      const returned = () => this.returnHolds(1);
      done.then(returned, returned);
    });
  }

  subscribed(): () => void {
    return () => {};
  }

  async close(): Promise<void> {
    // The wake-ups of publishes that resolved go out before the pool closes.
    await this.#wakes.close();
    await this.#driver.close();
  }
}

/** The reason a held transaction rolls back on purpose. */
const abandoned = new Error("the held transaction was abandoned");

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** How a settle runs its statement: on the pool (prepared), or in a held transaction. */
type Run = (statement: Prepared, values: unknown[]) => Promise<QueryResult>;

/**
 * Where a settle runs and how the queues it gives rows back to are woken: `wake` after its
 * statement committed (on the pool), or, without one, by `pg_notify` in the statement (a held
 * transaction's, so its commit wakes them).
 */
interface SettleOn {
  readonly run: Run;
  readonly wake: ((queues: readonly string[]) => void) | undefined;
}

/** One settle statement for a batch of one kind, on the pool or a held transaction. */
async function settleOn(
  on: SettleOn,
  sql: Statements,
  t: QueueTable,
  held: readonly Held[],
  settle: Settle,
): Promise<Set<bigint>> {
  if (held.length === 0) return new Set();
  const params = heldParams(held);
  /** A settle that gives rows back to a queue, and wakes its subscriptions. */
  const givenBack = async (statement: Waking, values: unknown[]): Promise<Set<bigint>> => {
    if (on.wake === undefined)
      return ids(await on.run(statement.notifying, [...values, t.channel]));
    const result = await on.run(statement.quiet, values);
    on.wake(queuesOf(result));
    return ids(result);
  };
  switch (settle.kind) {
    case "drop":
    case "ack":
      return ids(
        await on.run(settle.kind === "ack" && settle.keep ? sql.markDone : sql.remove, params),
      );
    case "retry":
      // At once: back in its place (its run time unchanged), as a release; later: its run time moves.
      if (settle.delayMs === 0) return settleOn(on, sql, t, held, { kind: "release" });
      return givenBack(sql.retryLater, [...params, settle.delayMs]);
    case "dead-letter":
      return givenBack(sql.deadLetter, [...params, settle.to, settle.reason]);
    case "release":
      return givenBack(sql.release, params);
    case "unclaim":
      return givenBack(sql.unclaim, params);
  }
}

/** A settle's UPDATE in two forms: one notifying in the statement, one returning the queues. */
interface Waking {
  readonly notifying: Prepared;
  readonly quiet: Prepared;
}

/**
 * `update` (on `q`, taking `params` parameters) as both forms: each row's id and its queue after
 * the update (a dead letter's is the dead letter queue), woken in the statement on the channel
 * given as the next parameter, or returned for the wake sender.
 */
function waking(update: string, params: number): Waking {
  const moved = `WITH moved AS (${update} RETURNING q.id, q.queue)`;
  return {
    notifying: prepared(
      `${moved} SELECT id::text AS id, pg_notify($${params + 1}, queue) FROM moved`,
    ),
    quiet: prepared(`${moved} SELECT id::text AS id, queue FROM moved`),
  };
}

type Statements = ReturnType<typeof statementsFor>;

/** A new row's values, in the order of `insertInto`'s columns. */
function insertValues(row: NewRow): unknown[] {
  return [
    row.queue,
    row.payload,
    row.headerNames,
    row.headerValues,
    row.partitionKey ?? null,
    row.priority,
    row.dedupKey ?? null,
    row.delayMs,
  ];
}

/** The end of an insert on the pool: the queues `ins` gave a row to, each once, to wake. */
const insertedQueues = "SELECT DISTINCT queue FROM ins";

/** The INSERT of `count` rows, their values in `insertValues`'s order. */
function insertInto(t: QueueTable, count: number): string {
  const tuples: string[] = [];
  for (let at = 0; at < count * 8; at += 8) {
    const p = (k: number) => `$${at + k}`;
    tuples.push(
      `(${p(1)}, ${p(2)}, ${p(3)}::text[], ${p(4)}::bytea[], ${p(5)}::bytea, ${p(6)}::integer, ${p(7)}::text, ${after(at + 8)})`,
    );
  }
  return `INSERT INTO ${t.sql} (queue, payload, header_names, header_values, partition_key, priority, dedup_key, run_at) VALUES ${tuples.join(", ")}`;
}

/**
 * The INSERT of `count` rows as the CTE `ins`, answering the queues that got a row: a publish
 * dropped by its dedupKey wakes nobody. The caller adds the statement's SELECT.
 */
function insertRows(t: QueueTable, count: number): string {
  return `WITH ins AS (${insertInto(t, count)} ON CONFLICT (queue, dedup_key) WHERE done_at IS NULL AND dedup_key IS NOT NULL DO NOTHING RETURNING queue)`;
}

/** The statements that depend only on the table, built once per store. */
function statementsFor(t: QueueTable) {
  const claims = claimStatements(t, after);
  const returning = "RETURNING q.id::text AS id";
  return {
    // A publish's row on the pool (`insert`): without a dedupKey, and with one.
    insertOne: prepared(insertInto(t, 1)),
    insertOneDeduped: prepared(`${insertRows(t, 1)} ${insertedQueues}`),
    plain: prepared(claims.plain),
    keyOrdered: prepared(claims.keyOrdered),
    // The settles, each matched by id and lease (`heldRows`, `fenced`).
    markDone: prepared(
      `UPDATE ${t.sql} AS q SET done_at = clock_timestamp(), ${unleased} FROM ${heldRows} WHERE ${fenced} ${returning}`,
    ),
    remove: prepared(`DELETE FROM ${t.sql} AS q USING ${heldRows} WHERE ${fenced} ${returning}`),
    // The settles that give rows back to a queue (`waking`: notifying or not).
    retryLater: waking(
      `UPDATE ${t.sql} AS q SET run_at = ${after(3)}, ${unleased} FROM ${heldRows} WHERE ${fenced}`,
      3,
    ),
    deadLetter: waking(
      `UPDATE ${t.sql} AS q SET queue = $3, dead_source = q.queue, dead_reason = $4, dead_attempts = q.attempts, attempts = 0, run_at = clock_timestamp(), dedup_key = NULL, ${unleased} FROM ${heldRows} WHERE ${fenced}`,
      4,
    ),
    release: waking(`UPDATE ${t.sql} AS q SET ${unleased} FROM ${heldRows} WHERE ${fenced}`, 2),
    // The claim's attempt taken back: fenced by the claim's lease, so only its own count goes.
    unclaim: waking(
      `UPDATE ${t.sql} AS q SET attempts = GREATEST(q.attempts - 1, 0), ${unleased} FROM ${heldRows} WHERE ${fenced}`,
      2,
    ),
    wake: prepared("SELECT pg_notify($1, q) FROM unnest($2::text[]) AS q"),
    extend: prepared(
      `UPDATE ${t.sql} AS q SET locked_until = ${after(3)} FROM ${heldRows} WHERE ${fenced} ${returning}`,
    ),
    nextDue: prepared(
      `SELECT EXTRACT(EPOCH FROM (min(GREATEST(run_at, COALESCE(locked_until, run_at))) - now())) * 1000 AS ms FROM ${t.sql} WHERE queue = $1 AND done_at IS NULL`,
    ),
    // At most `$3` undone rows of the queue, counted by state (`ready` is the claim's own test),
    // and at most `$3` of its dead letter's (`$2`, null without one) rows from it: a LIMITed read
    // each, so a scrape of a deep queue stops at the cap instead of reading every row. Not
    // prepared: it runs in a transaction of its own (`backlog`).
    backlog: `SELECT count(*) FILTER (WHERE locked_until > now()) AS leased,
  count(*) FILTER (WHERE (locked_until IS NULL OR locked_until <= now()) AND run_at > now()) AS scheduled,
  count(*) FILTER (WHERE (locked_until IS NULL OR locked_until <= now()) AND run_at <= now()) AS ready,
  (SELECT count(*) FROM (SELECT 1 FROM ${t.sql} WHERE queue = $2::text AND done_at IS NULL AND dead_source = $1 LIMIT $3) AS d) AS dead
FROM (SELECT locked_until, run_at FROM ${t.sql} WHERE queue = $1 AND done_at IS NULL LIMIT $3) AS q`,
    redrive: `WITH moved AS (UPDATE ${t.sql} SET queue = dead_source, dead_source = NULL, dead_reason = NULL, dead_attempts = NULL, attempts = 0, run_at = now(), ${unleased}
  WHERE queue = $1 AND dead_source IS NOT NULL AND ($2::text IS NULL OR dead_source = $2)
    AND (locked_until IS NULL OR locked_until <= now()) RETURNING queue)
SELECT queue, count(*) AS moved FROM moved GROUP BY queue`,
    purge: `WITH gone AS (DELETE FROM ${t.sql} WHERE id IN (SELECT id FROM ${t.sql} WHERE done_at IS NOT NULL AND done_at < now() - $1::double precision * interval '1 millisecond' LIMIT ${purgeBatch}) RETURNING 1) SELECT count(*) AS purged FROM gone`,
    purgeQueue: `WITH gone AS (DELETE FROM ${t.sql} WHERE queue = $1 RETURNING 1) SELECT count(*) AS purged FROM gone`,
  };
}

function heldParams(held: readonly Held[]): [string[], string[]] {
  return [held.map((h) => h.id.toString()), held.map((h) => h.lease)];
}

/** The queues a statement's rows name (`queue`): the ones its commit gave rows to, to wake. */
function queuesOf(result: QueryResult): string[] {
  return result.rows.map((row) => row.queue as string);
}

function ids(result: QueryResult): Set<bigint> {
  return new Set(result.rows.map((row) => BigInt(row.id as string)));
}

/** A claimed row as the library decoded it (bytea as bytes, arrays as arrays, int8 as text). */
export function claimedRow(row: Record<string, unknown>): ClaimedRow {
  const id = row.id as string;
  const queue = row.queue as string;
  return {
    id: BigInt(id),
    queue,
    payload: plain(row.payload as Uint8Array),
    ...headerArrays(id, queue, row.header_names, row.header_values),
    partitionKey: row.partition_key === null ? undefined : plain(row.partition_key as Uint8Array),
    priority: Number(row.priority),
    attempts: Number(row.attempts),
    deadSource: (row.dead_source as string | null) ?? undefined,
    deadReason: (row.dead_reason as string | null) ?? undefined,
    deadAttempts: row.dead_attempts === null ? undefined : Number(row.dead_attempts),
    waitedMs: Math.max(0, Number(row.waited_ms)),
  };
}

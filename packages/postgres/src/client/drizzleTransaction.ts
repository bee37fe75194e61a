import { RustStreamError } from "@ruststream/core";
import type { Queryable, QueryResult } from "./driver.js";

/**
 * What the queue uses of a Drizzle transaction (or a Drizzle database), by its shape: the package
 * needs no dependency on Drizzle to take one. `execute` takes Drizzle's SQL object; on
 * node-postgres it answers pg's result (`rows`), on postgres.js the rows themselves.
 */
export interface DrizzleTransactionLike {
  execute(query: never): PromiseLike<unknown>;
}

/** What the wrapper uses of Drizzle's `sql`: a raw text chunk, a parameter, and their join. */
interface DrizzleSql {
  raw(text: string): unknown;
  param(value: unknown): unknown;
  join(chunks: unknown[]): unknown;
}

let drizzleSql: Promise<DrizzleSql> | undefined;

/** Drizzle's `sql`, from the `drizzle-orm` the caller's transaction came from. */
function loadSql(): Promise<DrizzleSql> {
  drizzleSql ??= import("drizzle-orm").then(
    (drizzle) => drizzle.sql as unknown as DrizzleSql,
    (error: unknown) => {
      drizzleSql = undefined;
      throw new RustStreamError(
        "invalid-argument",
        `drizzleTransaction() runs its statements through the drizzle-orm package, which did not load (${(error as Error).message}): install drizzle-orm beside @ruststream/postgres`,
        { cause: error },
      );
    },
  );
  return drizzleSql;
}

const placeholder = /\$(\d+)/g;

/**
 * A statement with positional parameters as Drizzle SQL: its text as raw chunks and each `$n` a
 * parameter holding `values[n - 1]`. Drizzle numbers its parameters again in the order they come
 * (`$1`, `$2`, ...), so a placeholder used twice is sent twice, with the same value. Only the
 * package's own statements come here, which hold no `$` but their placeholders.
 */
function drizzleStatement(sql: DrizzleSql, text: string, values: readonly unknown[]): unknown {
  const chunks: unknown[] = [];
  let from = 0;
  for (const match of text.matchAll(placeholder)) {
    const n = Number(match[1]);
    if (n < 1 || n > values.length) {
      throw new RustStreamError(
        "invalid-argument",
        `drizzleTransaction: the statement names $${n} but has ${values.length} values`,
      );
    }
    chunks.push(sql.raw(text.slice(from, match.index)), sql.param(values[n - 1]));
    from = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(from)));
  return sql.join(chunks);
}

/**
 * A Drizzle transaction as the `transaction` a publish joins: `db.transaction(async (tx) => {
 * await tx.insert(orders).values(order); await app.publish("shipping", order, { options: {
 * transaction: drizzleTransaction(tx) } }) })`. The queue's statements run in it through
 * `tx.execute`, as Drizzle SQL of raw text and parameters, so its row exists only if Drizzle
 * commits. For Drizzle on node-postgres (`drizzle-orm/node-postgres`) or postgres.js
 * (`drizzle-orm/postgres-js`).
 */
export function drizzleTransaction(tx: DrizzleTransactionLike): Queryable {
  if (typeof tx?.execute !== "function") {
    throw new RustStreamError(
      "invalid-argument",
      "drizzleTransaction(tx) takes the transaction Drizzle hands to db.transaction(async (tx) => ...)",
    );
  }
  return {
    async query(text: string, values?: unknown[]): Promise<QueryResult> {
      const sql = await loadSql();
      const result = await tx.execute(drizzleStatement(sql, text, values ?? []) as never);
      // node-postgres answers pg's result; postgres.js the rows, as an array.
      const rows = Array.isArray(result) ? result : (result as { rows?: unknown }).rows;
      return { rows: (rows ?? []) as QueryResult["rows"] };
    },
  };
}

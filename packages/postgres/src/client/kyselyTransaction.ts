import { RustStreamError } from "@ruststream/core";
import type { Queryable, QueryResult } from "./driver.js";

/**
 * What the queue uses of a Kysely transaction (or a `Kysely` instance), by its shape: the package
 * needs no dependency on Kysely to take one.
 */
export interface KyselyTransactionLike {
  executeQuery(query: unknown): Promise<{ readonly rows: readonly unknown[] }>;
}

type CompiledQueryClass = { raw(sql: string, parameters?: unknown[]): unknown };

let compiledQuery: Promise<CompiledQueryClass> | undefined;

/** Kysely's `CompiledQuery`, from the `kysely` the caller's transaction came from. */
function loadCompiledQuery(): Promise<CompiledQueryClass> {
  compiledQuery ??= import("kysely").then(
    (kysely) => kysely.CompiledQuery as CompiledQueryClass,
    (error: unknown) => {
      compiledQuery = undefined;
      throw new RustStreamError(
        "invalid-argument",
        `kyselyTransaction() runs its statements through the kysely package, which did not load (${(error as Error).message}): install kysely beside @ruststream/postgres`,
        { cause: error },
      );
    },
  );
  return compiledQuery;
}

/**
 * A Kysely transaction as the `transaction` a publish joins: `db.transaction().execute(async (trx)
 * => { await trx.insertInto("orders")...; await app.publish("shipping", order, { options: {
 * transaction: kyselyTransaction(trx) } }) })`. The queue's statements run in it as raw compiled
 * queries (`CompiledQuery.raw`), so its row exists only if Kysely commits. Works with any dialect
 * whose driver is PostgreSQL's (`PostgresDialect`, or postgres.js behind a dialect).
 */
export function kyselyTransaction(trx: KyselyTransactionLike): Queryable {
  if (typeof trx?.executeQuery !== "function") {
    throw new RustStreamError(
      "invalid-argument",
      "kyselyTransaction(trx) takes the transaction Kysely hands to db.transaction().execute(async (trx) => ...)",
    );
  }
  return {
    async query(text: string, values?: unknown[]): Promise<QueryResult> {
      const CompiledQuery = await loadCompiledQuery();
      const result = await trx.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as QueryResult["rows"] };
    },
  };
}

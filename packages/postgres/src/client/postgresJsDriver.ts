import { RustStreamError } from "@ruststream/core";
import type { ListenEvents, Listening, PostgresDriver, Queryable, QueryResult } from "./driver.js";

/** A statement of postgres.js: a thenable of its rows. */
type Rows = PromiseLike<readonly Record<string, unknown>[]>;

/**
 * What the queue uses of a postgres.js `sql` (the `postgres` package), by its shape: the package
 * needs no dependency on postgres.js to take one.
 */
export interface PostgresJsLike {
  unsafe(text: string, values?: unknown[]): Rows;
  begin<T>(work: (sql: PostgresJsTransactionLike) => Promise<T>): Promise<T>;
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onListen?: () => void,
  ): Promise<{ unlisten(): Promise<void> }>;
  /** The settings it was made with; `max` is its pool's size (postgres.js's default is 10). */
  readonly options?: { readonly max?: number };
}

/** What the queue uses of a postgres.js transaction (the `sql` that `sql.begin` hands you). */
export interface PostgresJsTransactionLike {
  unsafe(text: string, values?: unknown[]): Rows;
}

/** A postgres.js connection (or transaction) as the seam's `Queryable`. */
function queryable(sql: PostgresJsTransactionLike): Queryable {
  return {
    query: async (text, values) => ({ rows: [...(await sql.unsafe(text, values ?? []))] }),
  };
}

/**
 * A postgres.js transaction as the `transaction` a publish joins: `sql.begin(async (tx) => { await
 * tx.unsafe("INSERT INTO orders ...", values); await app.publish("shipping", order, { options: {
 * transaction: postgresJsTransaction(tx) } }) })`. The queue's statements run in it through `tx.unsafe`, so its
 * row exists only if postgres.js commits.
 */
export function postgresJsTransaction(tx: PostgresJsTransactionLike): Queryable {
  if (typeof tx?.unsafe !== "function") {
    throw new RustStreamError(
      "invalid-argument",
      "postgresJsTransaction(tx) takes the transaction postgres.js hands to sql.begin(async (tx) => ...)",
    );
  }
  return queryable(tx);
}

/**
 * The seam over a postgres.js `sql`: `unsafe` for statements with positional parameters, `begin`
 * for transactions, `listen` for wake-ups. postgres.js listens again by itself after a lost
 * connection and says so by calling `onListen` again: each later call is reported as restored
 * (there is no word of the loss itself). The `sql` stays the caller's: `close()` only stops the
 * listens this opened.
 */
export class PostgresJsDriver implements PostgresDriver {
  readonly host = "postgres.js";
  readonly #sql: PostgresJsLike;
  readonly #listens = new Set<{ unlisten(): Promise<void> }>();

  constructor(sql: PostgresJsLike) {
    this.#sql = sql;
  }

  get connections(): number {
    return this.#sql.options?.max ?? 10;
  }

  query(text: string, values?: unknown[]): Promise<QueryResult> {
    return queryable(this.#sql).query(text, values);
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#sql.begin((tx) => work(queryable(tx)));
  }

  async listen(channel: string, events: ListenEvents): Promise<Listening> {
    let listened = 0;
    const meta = await this.#sql.listen(
      channel,
      (payload) => events.notified(payload),
      () => {
        listened += 1;
        if (listened > 1) events.restored();
      },
    );
    this.#listens.add(meta);
    let closed = false;
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        this.#listens.delete(meta);
        await meta.unlisten();
      },
    };
  }

  async close(): Promise<void> {
    const listens = [...this.#listens];
    this.#listens.clear();
    await Promise.all(listens.map((meta) => meta.unlisten()));
  }
}

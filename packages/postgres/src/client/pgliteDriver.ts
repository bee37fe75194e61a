import type { ListenEvents, Listening, PostgresDriver, Queryable, QueryResult } from "./driver.js";

/**
 * What the queue uses of a PGlite database (`@electric-sql/pglite`), by its shape: the package
 * needs no dependency on PGlite to take one.
 */
export interface PGliteLike extends Queryable {
  transaction<T>(callback: (tx: Queryable) => Promise<T>): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * The seam over a PGlite database (WASM PostgreSQL in the process): its `query`, `transaction`
 * and `listen` are the seam's own. One connection only: a transactional queue, whose rows in work
 * each hold a transaction, would hold the only one, so use leased queues on it. The database stays
 * the caller's: `close()` only stops the listens this opened.
 */
export class PgliteDriver implements PostgresDriver {
  readonly host = "pglite";
  readonly connections = 1;
  readonly #db: PGliteLike;
  readonly #listens = new Set<() => Promise<void>>();

  constructor(db: PGliteLike) {
    this.#db = db;
  }

  query(text: string, values?: unknown[]): Promise<QueryResult> {
    return this.#db.query(text, values);
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#db.transaction(work);
  }

  /** In the process, a PGlite listen is never lost: `events.lost` is never called. */
  async listen(channel: string, events: ListenEvents): Promise<Listening> {
    const stop = await this.#db.listen(channel, (payload) => events.notified(payload));
    this.#listens.add(stop);
    let closed = false;
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        this.#listens.delete(stop);
        await stop();
      },
    };
  }

  async close(): Promise<void> {
    const listens = [...this.#listens];
    this.#listens.clear();
    await Promise.all(listens.map((stop) => stop()));
  }
}

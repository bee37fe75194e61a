import pg from "pg";
import type { ListenEvents, Listening, PostgresDriver, Queryable, QueryResult } from "./driver.js";
import { PgListener } from "./pgListener.js";
import type { Prepared } from "./prepared.js";

/**
 * The seam over `pg` (node-postgres): statements and transactions on a `pg.Pool`, LISTEN on a
 * client of its own with the pool's settings (a pooled connection would be handed to others).
 * `pg` does not LISTEN again after a lost connection; this does, with a backoff.
 */
export class PgDriver implements PostgresDriver {
  readonly #pool: pg.Pool;
  readonly #owned: boolean;
  readonly #applicationName: string;
  readonly #prepare: boolean;
  readonly #listeners = new Set<PgListener>();

  /**
   * `pool`: a pool of the caller's (kept open at close), or settings for one of ours; `prepare`:
   * whether `prepared` names its statements (`false` sends their text, for a pooler that keeps no
   * prepared statements).
   */
  constructor(
    pool: pg.Pool | pg.PoolConfig,
    options: { owned: boolean; applicationName: string; prepare: boolean },
  ) {
    this.#pool = pool instanceof pg.Pool ? pool : new pg.Pool(pool);
    this.#owned = options.owned;
    this.#applicationName = options.applicationName;
    this.#prepare = options.prepare;
    // An idle pooled connection that dies emits here; without a listener it would crash the process.
    // The next statement on the pool opens another, and fails if the server stays away.
    if (this.#owned) this.#pool.on("error", () => {});
  }

  /** The pool's `max` (`pg`'s own default is 10). */
  get connections(): number {
    return this.#pool.options.max ?? 10;
  }

  query(text: string, values?: unknown[]): Promise<QueryResult> {
    return this.#pool.query(text, values);
  }

  /** A named statement: `pg` prepares it on each pooled connection the first time it runs there. */
  prepared(statement: Prepared, values: unknown[]): Promise<QueryResult> {
    if (!this.#prepare) return this.#pool.query(statement.text, values);
    return this.#pool.query({ name: statement.name, text: statement.text, values });
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    // Whether the connection's transaction state is unknown (BEGIN, COMMIT or ROLLBACK failed).
    let broken = true;
    // `pg`'s pool takes its own error listener off a connection it hands out. A connection lost
    // while this transaction holds it idle (a handler awaiting something else between statements)
    // then emits `error` with no listener, which ends the process. Listened to here instead: the
    // transaction's next statement fails on the closed connection, and the release destroys it.
    const lost = () => {
      broken = true;
    };
    client.on("error", lost);
    try {
      await client.query("BEGIN");
      let result: T;
      try {
        result = await work(client);
      } catch (error) {
        await client.query("ROLLBACK").then(
          () => {
            broken = false;
          },
          () => undefined,
        );
        throw error;
      }
      await client.query("COMMIT");
      broken = false;
      return result;
    } finally {
      // A connection whose transaction state is unknown is destroyed, never handed to the next user.
      client.release(broken ? true : undefined);
      client.off("error", lost);
    }
  }

  async listen(channel: string, events: ListenEvents): Promise<Listening> {
    const config = { ...this.#pool.options, application_name: `${this.#applicationName} listen` };
    const listener = new PgListener(config, channel, events, () =>
      this.#listeners.delete(listener),
    );
    this.#listeners.add(listener);
    await listener.start();
    return listener;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#listeners].map((l) => l.close()));
    if (this.#owned) await this.#pool.end();
  }
}

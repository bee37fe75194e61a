/**
 * The seam between the queue and a PostgreSQL client library: the three things the queue needs,
 * and nothing of any one library's types. Behind it: `pg` (node-postgres, `pgDriver.ts`, what a
 * `url` or a `pool` gets), a postgres.js `sql` (`postgresJsDriver.ts`: `sql.unsafe`, `sql.begin`,
 * `sql.listen`) and a PGlite database (`pgliteDriver.ts`: `query`, `transaction`, `listen`).
 */

import type { Prepared } from "./prepared.js";

/** The rows a statement answered, each a record of column to value as the library decodes it. */
export interface QueryResult {
  readonly rows: readonly Record<string, unknown>[];
}

/**
 * Anything that runs a statement with positional parameters (`$1`, `$2`, ...): a pool, one
 * connection, or a transaction. A `pg` `Client`, `PoolClient` or `Pool` is one as it is, so a
 * caller's open transaction can be handed to a publish.
 */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<QueryResult>;
}

/** A wake-up channel being listened to. */
export interface Listening {
  /** Stops listening (idempotent). */
  close(): Promise<void>;
}

/** What a listen tells its caller besides notifications. */
export interface ListenEvents {
  /** A notification's payload arrived on the channel. */
  notified(payload: string): void;
  /**
   * The listening connection was lost (`reason`: the client's words) and is being made again;
   * notifications sent meanwhile are gone, so the caller looks for what arrived.
   */
  lost(reason: string): void;
  /** Listening again after a loss. */
  restored(): void;
}

/** The seam: statements, transactions on one connection, and LISTEN. */
export interface PostgresDriver extends Queryable {
  /**
   * Runs one of the queue's own statements, prepared on the connection under its name where the
   * client can (`pg`: a named statement, parsed and planned once per connection). A driver without
   * it runs the statement's text with `query`, planned at every call.
   */
  prepared?(statement: Prepared, values: unknown[]): Promise<QueryResult>;
  /** What the server is, for generated docs, where the driver knows (never a credential). */
  readonly host?: string;
  /**
   * How many connections it holds at once at most (a pool's `max`): a transactional queue's rows in
   * work each hold one, so the store keeps their number under it.
   */
  readonly connections: number;
  /**
   * Runs `work` in a transaction on one connection: committed when it resolves, rolled back when
   * it throws (and the throw passed on).
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Listens on `channel` (a plain identifier) until closed, and again after a lost connection. */
  listen(channel: string, events: ListenEvents): Promise<Listening>;
  /** Ends what the driver opened (a pool it made); a pool the caller gave stays theirs. */
  close(): Promise<void>;
}

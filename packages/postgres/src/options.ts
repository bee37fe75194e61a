import { RustStreamError, type ServerDescription } from "@ruststream/core";
import { hostFromUrl } from "@ruststream/core/broker";
import type { PostgresDriver, Queryable } from "./client/driver.js";

// The broker's options, read by the broker (checked when it is built, used to connect) and by its
// connection: in a file of their own, so broker.ts imports connection.ts and nothing imports either
// back. Beside them, what is read from them alone: the server's description.

/** A `pg.Pool` as this package uses it: statements, a client to hold, and its settings. */
export interface PgPoolLike extends Queryable {
  connect(): Promise<unknown>;
  readonly options: object;
}

export interface PostgresBrokerOptions {
  /**
   * The server: a connection string (`postgres://user:password@host:5432/db`), which the broker
   * opens a `pg.Pool` on. Give this, `pool` or `driver`.
   */
  readonly url?: string;
  /**
   * A `pg.Pool` of yours (the broker uses it and leaves it open at shutdown). It needs room for
   * the claims' statements, a transactional subscription's rows in work (one connection each)
   * and your own use; the broker opens one more connection of its own, for LISTEN.
   */
  readonly pool?: PgPoolLike;
  /**
   * Another client behind the seam: `new PostgresJsDriver(sql)` (postgres.js) or `new
   * PgliteDriver(db)` (PGlite), or your own `PostgresDriver`. The client stays yours; shutdown
   * stops only the listens the broker opened on it.
   */
  readonly driver?: PostgresDriver;
  /**
   * Whether the queue's own statements (claims, settles, lease renewals, a publish's INSERT
   * outside your transaction) go as named prepared statements on `pg` (default `true`): parsed
   * once per connection, where a statement sent by its text is parsed and planned at every call.
   * Turn it off behind a pooler that cannot keep a session's prepared statements (PgBouncer in
   * transaction mode before 1.21, or with `max_prepared_statements` 0). A `driver` prepares as
   * its client does.
   */
  readonly prepare?: boolean;
  /** The pool size when the broker opens the pool from `url` (default 10). */
  readonly poolSize?: number;
  /**
   * The name the broker's connections show in `pg_stat_activity` (default `ruststream`); the
   * LISTEN connection shows it with ` listen` after it.
   */
  readonly applicationName?: string;
  /** The queue table: `ruststream_queue` unless given, optionally schema-qualified (`app.jobs`). */
  readonly table?: string;
  /**
   * Creates the table and its indexes at connect when missing (default `false`: the table must
   * exist; `schemaSql(table)` prints the SQL for a migration).
   */
  readonly ensureSchema?: boolean;
}

/** The server as configured, before or after connecting: never the password. */
export function describePostgresServer(options: PostgresBrokerOptions): ServerDescription {
  if (options.url !== undefined) {
    return { protocol: "postgres", host: hostFromUrl(options.url) };
  }
  if (options.driver !== undefined) {
    return { protocol: "postgres", host: options.driver.host ?? "a driver of the caller's" };
  }
  const settings = options.pool?.options as { host?: unknown; port?: unknown } | undefined;
  const host = typeof settings?.host === "string" ? settings.host : "localhost";
  const port = typeof settings?.port === "number" ? settings.port : 5432;
  return { protocol: "postgres", host: `${host}:${port}` };
}

/** Refuses options the broker cannot connect with, before anything is opened. */
export function checkOptions(options: PostgresBrokerOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new RustStreamError(
      "invalid-argument",
      'PostgresBroker needs options: new PostgresBroker({ url: "postgres://..." }), { pool } or { driver }',
    );
  }
  const given = [options.url, options.pool, options.driver].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new RustStreamError(
      "invalid-argument",
      `PostgresBroker takes one of url, pool or driver (it was given ${given}): new PostgresBroker({ url: "postgres://..." })`,
    );
  }
  if (options.prepare !== undefined && typeof options.prepare !== "boolean") {
    throw new RustStreamError(
      "invalid-argument",
      `PostgresBroker: prepare must be true or false (it was ${String(options.prepare)}): false sends every statement by its text, for a pooler that keeps no prepared statements`,
    );
  }
  if (options.url !== undefined && (typeof options.url !== "string" || options.url === "")) {
    throw new RustStreamError(
      "invalid-argument",
      "PostgresBroker: url must be a connection string",
    );
  }
}

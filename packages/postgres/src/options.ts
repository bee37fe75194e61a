import { RustStreamError, type ServerDescription } from "@ruststream/core";
import { hostFromUrl } from "@ruststream/core/broker";
import type { Queryable } from "./client/driver.js";

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
   * opens a `pg.Pool` on. Give this or `pool`.
   */
  readonly url?: string;
  /**
   * A `pg.Pool` of yours (the broker uses it and leaves it open at shutdown). It needs room for
   * the claims' statements, a transactional subscription's rows in work (one connection each)
   * and your own use; the broker opens one more connection of its own, for LISTEN.
   */
  readonly pool?: PgPoolLike;
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
      'PostgresBroker needs options: new PostgresBroker({ url: "postgres://..." }) or { pool }',
    );
  }
  if (options.url !== undefined && options.pool !== undefined) {
    throw new RustStreamError(
      "invalid-argument",
      "PostgresBroker takes url or pool, not both: the pool already knows its server",
    );
  }
  if (options.url !== undefined && (typeof options.url !== "string" || options.url === "")) {
    throw new RustStreamError(
      "invalid-argument",
      "PostgresBroker: url must be a connection string",
    );
  }
}

import { createHash } from "node:crypto";
import { RustStreamError } from "@ruststream/core";

/** A plain identifier: what the table option takes, so every name is safe to quote and index. */
const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/** The table a queue lives in, named by the user, with the names derived from it. */
export interface QueueTable {
  /** As given: `jobs` or `app.jobs`. */
  readonly name: string;
  /** Quoted for SQL: `"jobs"` or `"app"."jobs"`. */
  readonly sql: string;
  /** The bare table name, quoted, for index names built from it. */
  readonly indexPrefix: string;
  /** The NOTIFY channel publishes wake subscriptions on (an identifier of 63 bytes at most). */
  readonly channel: string;
}

/** The table name when none is given. */
export const defaultTable = "ruststream_queue";

/**
 * Reads a table option: a plain identifier, optionally schema-qualified (`app.jobs`), each part
 * 48 characters at most so the derived index names stay within PostgreSQL's 63.
 */
export function queueTable(name: string | undefined): QueueTable {
  const given = name ?? defaultTable;
  const parts = typeof given === "string" ? given.split(".") : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((p) => identifier.test(p))) {
    throw new RustStreamError(
      "invalid-argument",
      `table: ${JSON.stringify(given)} is not a table name this package takes: give letters, digits and underscores (not starting with a digit, at most 48), optionally schema-qualified as "app.jobs"`,
    );
  }
  const bare = parts[parts.length - 1] as string;
  const digest = createHash("sha256").update(given).digest("hex").slice(0, 16);
  return {
    name: given,
    sql: parts.map((p) => `"${p}"`).join("."),
    indexPrefix: bare,
    channel: `ruststream_wake_${digest}`,
  };
}

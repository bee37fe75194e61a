import { RustStreamError } from "@ruststream/core";
import { statements } from "../schema.js";
import { defaultTable, type QueueTable, queueTable } from "../table.js";

/** The suffix the outbox table takes after the queue table's name. */
const suffix = "_outbox";

/**
 * The outbox table of the queue table `table` (`ruststream_queue` unless given): `<table>_outbox`,
 * in the same schema. It has the queue table's columns and indexes, and its rows are claimed,
 * leased and settled by the same statements: a row's `queue` is the label of the broker it goes
 * to, its destination's name is a header (`x-ruststream-outbox-destination`), and its `done_at` is
 * when the broker confirmed it (with `sent: "keep"`).
 */
export function outboxTable(table?: string): QueueTable {
  const name = `${table ?? defaultTable}${suffix}`;
  const bare = name.split(".").pop() ?? name;
  if (bare.length > 48) {
    throw new RustStreamError(
      "invalid-argument",
      `table: the outbox table of ${JSON.stringify(table)} would be ${JSON.stringify(name)}, longer than 48 characters: give a queue table name of at most ${48 - suffix.length}`,
    );
  }
  return queueTable(name);
}

/**
 * The outbox table's schema, as SQL a migration can hold (idempotent, as the queue's):
 * `new PostgresBroker({ ..., ensureSchema: true }).connectOutbox()` runs the same statements.
 */
export function outboxSchemaSql(table?: string): string {
  return statements(outboxTable(table)).join(";\n\n").concat(";\n");
}

import { queueTable } from "../table.js";

/** The inbox table's name when none is given. */
export const defaultInboxTable = "ruststream_inbox";

/**
 * The inbox table's schema, as SQL a migration can hold (idempotent): one row per outbox id a
 * consumer has handled, inserted in the handler's own transaction, so a copy relayed again (a
 * relay that died between the broker's confirmation and marking its row sent) finds its id there
 * and has no effect. `consumer` tells apart the handlers sharing one table: each handles an id
 * once.
 */
export function inboxSchemaSql(table?: string): string {
  return inboxStatements(table).join(";\n\n").concat(";\n");
}

/** The schema's statements, one by one. */
export function inboxStatements(table?: string): string[] {
  const t = queueTable(table ?? defaultInboxTable);
  return [
    `CREATE TABLE IF NOT EXISTS ${t.sql} (
  consumer   text        NOT NULL,
  outbox_id  text        NOT NULL,
  handled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, outbox_id)
)`,
    `CREATE INDEX IF NOT EXISTS "${t.indexPrefix}_handled" ON ${t.sql} (handled_at)`,
  ];
}

import { type ReadonlyHeaderMap, RustStreamError } from "@ruststream/core";
import type { Queryable } from "../client/driver.js";
import { postgresHeaderNames } from "../names.js";
import { queueTable } from "../table.js";
import { defaultInboxTable, inboxStatements } from "./inboxTable.js";

/**
 * The consumer's side of the outbox: a table of the outbox ids each consumer has handled. A
 * handler records the message's id in its own transaction, with its effects, and skips them when
 * the id was there: a copy the relay published again (it died between the broker's confirmation
 * and marking the row sent) then has no effect, and the effects happen once.
 */
export class PostgresInbox {
  /** The inbox table, as given (`ruststream_inbox` unless named). */
  readonly table: string;
  readonly #sql: string;
  readonly #consumer: string;

  /** `consumer` names the handler (its ids are its own); `table` the inbox table. */
  constructor(consumer: string, options: { readonly table?: string } = {}) {
    if (typeof consumer !== "string" || consumer === "") {
      throw new RustStreamError(
        "invalid-argument",
        'new PostgresInbox(consumer) needs the consumer\'s name, for example new PostgresInbox("billing")',
      );
    }
    const t = queueTable(options.table ?? defaultInboxTable);
    this.table = t.name;
    this.#consumer = consumer;
    this.#sql = `INSERT INTO ${t.sql} (consumer, outbox_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS first`;
  }

  /**
   * Creates the inbox table when missing (idempotent; `inboxSchemaSql` prints it): one simple
   * query, so one transaction, under an advisory lock so replicas starting together do not race.
   */
  async ensureSchema(on: Queryable): Promise<void> {
    const lock = `SELECT pg_advisory_xact_lock(hashtext('${this.table}'))`;
    await on.query([lock, ...inboxStatements(this.table)].join(";\n"));
  }

  /**
   * Records the message's outbox id in `tx` (the handler's open transaction) and answers whether
   * it is the first time: `false` means the message was handled already, and the handler skips
   * its effects. A message without `x-ruststream-outbox-id` is refused (`invalid-argument`): it
   * did not come through an outbox.
   */
  async first(tx: Queryable, message: { readonly headers: ReadonlyHeaderMap }): Promise<boolean> {
    const id = message?.headers?.getString(postgresHeaderNames.outboxId);
    if (id === undefined || id === "") {
      throw new RustStreamError(
        "invalid-argument",
        `inbox "${this.#consumer}": the message has no ${postgresHeaderNames.outboxId} header, so it did not come through an outbox; handle it without the inbox`,
      );
    }
    const result = await tx.query(this.#sql, [this.#consumer, id]);
    return result.rows.length === 1;
  }
}

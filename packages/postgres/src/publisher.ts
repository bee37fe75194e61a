import {
  HeaderMap,
  type OutgoingMessage,
  type RawMessage,
  type Receipt,
  type Requester,
  type RequestOptions,
  RustStreamError,
  type Transaction,
  type TransactionalPublisher,
} from "@ruststream/core";
import {
  assertPayloadBytes,
  type brokerMark,
  type PendingReply,
  partitionKeyBytes,
  publishRequest,
  requestMark,
  stageTransaction,
  transactionsMark,
  writeDeadLetterOrigin,
} from "@ruststream/core/broker";
import type { Queryable } from "./client/driver.js";
import type { NewRow, QueueStore } from "./client/store.js";
import { heldTransactionOf } from "./queue/transactionOf.js";

/** Per-message settings of a publish to a queue. */
export interface PostgresPublishOptions {
  /**
   * A transaction of yours (a `pg` client inside `BEGIN`, or anything with `query(text, values)`):
   * the row is inserted in it, so it exists only if that transaction commits, and its wake-up is
   * sent at the commit. Without it, a publish from a transactional handler goes in the claim's
   * transaction, and any other publish in a statement of its own.
   */
  readonly transaction?: Queryable;
  /** Claimable this many milliseconds after the insert (default 0). */
  readonly delayMs?: number;
  /** Higher first (default 0); rows of one priority go in order. */
  readonly priority?: number;
  /** At most one undone row per queue carries this key: a publish of a second is dropped. */
  readonly dedupKey?: string;
}

/**
 * What a publisher needs from its connection. Declared here and implemented by the connection, so
 * this file never imports it.
 */
export interface PublisherHost {
  readonly [brokerMark]: string;
  readonly store: QueueStore;
  assertOpen(): void;
  /** Records what was published, on an in-process connection (for `published()`). */
  recordRow(row: NewRow, message: OutgoingMessage<PostgresPublishOptions>): void;
  /** Waits for the reply correlated by `correlationId` on this connection's reply inbox. */
  awaitReply(correlationId: string, timeoutMs: number): PendingReply;
}

/**
 * A live publisher: a publish inserts one row (in your transaction when the message's options name
 * one) and resolves once the insert is done; `transaction(work)` inserts everything `work`
 * published in one statement when it resolves, nothing when it throws. A request is published
 * with the connection's reply inbox (a queue of the table, `replyInbox.ts`) as `reply-to`.
 */
export class PostgresPublisher
  implements TransactionalPublisher<PostgresPublishOptions>, Requester<PostgresPublishOptions>
{
  readonly [transactionsMark] = true as const;
  readonly [requestMark] = true as const;
  readonly #host: PublisherHost;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  async publish(message: OutgoingMessage<PostgresPublishOptions>): Promise<Receipt> {
    this.#host.assertOpen();
    const row = rowOf(message);
    const via = message.options?.transaction ?? heldTransactionOf(message.cause);
    await this.#host.store.insert([row], via);
    this.#host.recordRow(row, message);
    return { name: message.name };
  }

  async request(
    message: OutgoingMessage<PostgresPublishOptions>,
    options: RequestOptions,
  ): Promise<RawMessage> {
    this.#host.assertOpen();
    return publishRequest(
      message,
      (correlationId) => this.#host.awaitReply(correlationId, options.timeoutMs),
      (request) => this.publish(request),
      options,
    );
  }

  async transaction<T>(work: (tx: Transaction<PostgresPublishOptions>) => Promise<T>): Promise<T> {
    this.#host.assertOpen();
    const staged: { row: NewRow; message: OutgoingMessage<PostgresPublishOptions> }[] = [];
    const result = await stageTransaction<T, PostgresPublishOptions>(work, (message) => {
      if (message.options?.transaction !== undefined) {
        throw new RustStreamError(
          "invalid-argument",
          `publish to "${message.name}" inside transaction(): it is one statement of its own, so it cannot also join your transaction; publish with the transaction option outside it`,
        );
      }
      staged.push({ row: rowOf(message), message });
    });
    this.#host.assertOpen();
    // One statement: every row of the transaction, or none.
    await this.#host.store.insert(staged.map((s) => s.row));
    for (const { row, message } of staged) this.#host.recordRow(row, message);
    return result;
  }
}

/**
 * The row a message goes in as, or the refusal, before anything is sent: what every publish and
 * every in-process injection go through, so both refuse the same messages.
 */
export function rowOf(message: OutgoingMessage<PostgresPublishOptions>): NewRow {
  assertPayloadBytes(message);
  if (typeof message.name !== "string" || message.name === "") {
    throw new RustStreamError("invalid-argument", "publish() needs a non-empty queue name");
  }
  const options = message.options ?? {};
  const delayMs = options.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    throw new RustStreamError(
      "invalid-argument",
      `publish to "${message.name}": delayMs ${delayMs} is not a number of milliseconds, 0 or more`,
    );
  }
  const priority = options.priority ?? 0;
  if (!Number.isSafeInteger(priority) || Math.abs(priority) > 2_147_483_647) {
    throw new RustStreamError(
      "invalid-argument",
      `publish to "${message.name}": priority ${priority} is not a whole number within PostgreSQL's integer`,
    );
  }
  if (
    options.dedupKey !== undefined &&
    (typeof options.dedupKey !== "string" || options.dedupKey === "")
  ) {
    throw new RustStreamError(
      "invalid-argument",
      `publish to "${message.name}": dedupKey must be a non-empty string`,
    );
  }
  const headers = message.headers?.clone() ?? new HeaderMap();
  if (message.deadLetterOrigin !== undefined)
    writeDeadLetterOrigin(headers, message.deadLetterOrigin);
  const headerNames: string[] = [];
  const headerValues: Uint8Array[] = [];
  // The clone's bytes are its own (a value held as text is encoded afresh): no copy more.
  for (const [name, value] of headers.entries()) {
    headerNames.push(name);
    headerValues.push(value);
  }
  refuseNul(message.name, "queue name", message.name);
  for (const name of headerNames) refuseNul(message.name, "header name", name);
  if (options.dedupKey !== undefined) refuseNul(message.name, "dedupKey", options.dedupKey);
  const key = message.partitionKey;
  return {
    queue: message.name,
    // Copied now: the caller may reuse its buffers once the publish resolves.
    payload: message.payload.slice(),
    headerNames,
    headerValues,
    partitionKey: key === undefined ? undefined : partitionKeyBytes(key).slice(),
    priority,
    dedupKey: options.dedupKey,
    delayMs,
  };
}

/** PostgreSQL's text cannot hold a NUL character: refused before sending, naming where it was. */
function refuseNul(queue: string, what: string, value: string): void {
  if (value.includes("\u0000")) {
    throw new RustStreamError(
      "publish-refused",
      `publish to "${queue}": the ${what} holds a NUL character, which PostgreSQL's text cannot store`,
    );
  }
}

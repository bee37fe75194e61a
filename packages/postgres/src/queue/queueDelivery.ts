import {
  type Delivery,
  HeaderMap,
  type ReadonlyHeaderMap,
  readRetryCount,
  type SettleResult,
} from "@ruststream/core";
import { DeliveryBase, writeDeadLetterRetryCount } from "@ruststream/core/broker";
import type { Queryable } from "../client/driver.js";
import type { ClaimedRow, Held, HeldTransaction } from "../client/store.js";
import { postgresHeaderNames } from "../names.js";
import { PostgresQueuePosition } from "../position.js";

/** How a delivery is settled, as its subscription turns it into a statement. */
export type Verb =
  | { readonly kind: "ack" }
  | { readonly kind: "requeue"; readonly delayMs: number }
  | { readonly kind: "drop" };

/** What a delivery asks of its subscription. */
export interface QueueDeliveryOwner {
  assertOpen(): void;
  settle(delivery: PostgresQueueDelivery, verb: Verb): Promise<"ok">;
  handOver(
    delivery: PostgresQueueDelivery,
    batch: readonly Delivery[] | undefined,
  ): Promise<boolean> | undefined;
}

/** A claimed row's headers; a dead-lettered row's origin beside them, in core's names. */
export function rowHeaders(row: ClaimedRow): HeaderMap {
  const headers = new HeaderMap();
  row.headerNames.forEach((name, i) => {
    headers.set(name, row.headerValues[i] ?? new Uint8Array());
  });
  if (row.deadSource !== undefined) {
    const names = postgresHeaderNames.deadLetter;
    headers.set(names.source, row.deadSource);
    headers.set(names.reason, row.deadReason ?? "");
    // The deliveries it had, as the runtime's own dead letters say: what it carried, plus the
    // claims of its queue.
    writeDeadLetterRetryCount(headers, readRetryCount(headers) + (row.deadAttempts ?? 0));
  }
  return headers;
}

/**
 * A claimed row. Its settle is fenced by the lease it was claimed under; a transactional
 * subscription's delivery also holds the claim's transaction, which its handler writes in
 * (`transactionOf`) and its settle commits.
 */
export class PostgresQueueDelivery extends DeliveryBase<PostgresQueuePosition> {
  readonly name: string;
  readonly position: PostgresQueuePosition;
  readonly held: Held;
  /** From the row's run time to its claim, in milliseconds. */
  readonly waitedMs: number;
  /** The claim's transaction, on a transactional subscription. */
  readonly transaction: HeldTransaction | undefined;
  readonly #row: ClaimedRow;
  readonly #owner: QueueDeliveryOwner;
  #headers: HeaderMap | undefined;

  constructor(
    owner: QueueDeliveryOwner,
    row: ClaimedRow,
    lease: string,
    transaction: HeldTransaction | undefined,
  ) {
    super();
    this.#owner = owner;
    this.#row = row;
    this.name = row.queue;
    this.position = new PostgresQueuePosition(row.id);
    this.held = { id: row.id, lease };
    this.waitedMs = row.waitedMs;
    this.transaction = transaction;
  }

  get payload(): Uint8Array {
    return this.#row.payload;
  }

  /** The row's headers; a dead-lettered row's origin beside them, in core's names. */
  get headers(): ReadonlyHeaderMap {
    this.#headers ??= rowHeaders(this.#row);
    return this.#headers;
  }

  /** Header arrays another writer left that are not headers: settled by the decode policy. */
  override get decodeError(): Error | undefined {
    return this.#row.unreadable;
  }

  get partitionKey(): Uint8Array | undefined {
    return this.#row.partitionKey;
  }

  /** Claims of the row so far, this one included. */
  get redeliveryCount(): number {
    return this.#row.attempts;
  }

  /** The claim's transaction to run statements in, on a transactional subscription. */
  get tx(): Queryable | undefined {
    return this.transaction?.tx;
  }

  /**
   * Before its handler runs: on a transactional `keyOrder` queue, a row waits for the settles of
   * the earlier rows of its key its subscription holds, and goes back unhandled (`false`) when one
   * of them failed. The rows of `batch` (handed to one batch handler with it) are not waited for.
   */
  handOver(batch?: readonly Delivery[]): Promise<boolean> | undefined {
    return this.#owner.handOver(this, batch);
  }

  protected settleAck(): SettleResult {
    return this.#settle({ kind: "ack" });
  }

  protected settleNack(requeue: boolean): SettleResult {
    return this.#settle(requeue ? { kind: "requeue", delayMs: 0 } : { kind: "drop" });
  }

  protected override settleNackAfter(ms: number): SettleResult {
    return this.#settle({ kind: "requeue", delayMs: ms });
  }

  #settle(verb: Verb): SettleResult {
    this.#owner.assertOpen();
    return this.#owner.settle(this, verb);
  }
}

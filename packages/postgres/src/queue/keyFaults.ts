import { RustStreamError } from "@ruststream/core";
import type { Queryable } from "../client/driver.js";
import type { HeldTransaction } from "../client/store.js";
import type { PostgresQueueDelivery } from "./queueDelivery.js";

/** No rows: what a row handed to a handler of its own travels with. */
export const noRows: ReadonlySet<bigint> = new Set();

/** What a row of a claim is known by here: its id and its key. */
export interface KeyedRow {
  readonly id: bigint;
  readonly partitionKey: Uint8Array | undefined;
}

/** The error of a row held back behind an earlier row of its key. */
export function behindError(id: bigint, queue: string): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    `row ${id} of "${queue}" was not committed: an earlier row of its key is still undone, its transaction lost to a fault before it settled; the handler's writes were rolled back and the row goes back, to come again after that row (keyOrder)`,
  );
}

/** A row's settle or handling under way: its key, when it ends, and the function ending it. */
interface Ending {
  readonly key: Uint8Array;
  readonly ended: Promise<void>;
  readonly end: () => void;
  /** The delivery handled: a row claimed again is another, whose end is its own. */
  readonly delivery: PostgresQueueDelivery;
}

function ending(key: Uint8Array, delivery: PostgresQueueDelivery): Ending {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  return { key, ended, end, delivery };
}

/** A row whose transactional settle failed: its key and its place in it. */
interface Fault {
  readonly key: Uint8Array;
  readonly id: bigint;
}

/**
 * The rows of a transactional `keyOrder` subscription that must not commit: those behind a row of
 * their key whose settle failed (its transaction lost to a fault, or its ack refused as behind).
 * That row comes back when its lease ends, so the rows this subscription already holds behind it,
 * or takes in a claim begun before it failed, are given back rather than committed ahead of it.
 * Only the claimant can tell: on the server the row may still look held, its lock kept by a
 * backend whose connection the client lost (a stall) until that backend notices. And since the
 * runtime's key lane goes on to the next row while a settle is still under way, a settle first
 * waits for those of the earlier rows of its key (`turn`): a commit stalled by a fault is known to
 * have failed before a row behind it commits. The runtime asks before a handler runs
 * (`handOver`): a row waits there until the earlier rows of its key handed over before it are
 * settled (a reply's handler settles only after the reply's publish, and rows of one key may run
 * side by side on workers without a key; the rows of one batch do not wait for each other, all
 * settled after its handler), and one held back goes back unhandled, so no handler of a key's
 * later row runs before the earlier row is handled again. The handler's statements wait the same
 * way (`gate`), and fail on a row held back, for a handler that runs all the same (one handed over
 * before its key's earlier row was visible, or one whose reader did not ask).
 */
export class KeyFaults {
  /** Held rows whose ack gives them back instead. */
  readonly #behind = new Set<bigint>();
  /** Settles under way, by row: its key, and when it ends. */
  readonly #settling = new Map<
    bigint,
    { readonly key: Uint8Array; readonly ended: Promise<void> }
  >();
  /** Rows handed to their handler and not settled yet, by row: its key, and its end. */
  readonly #handling = new Map<bigint, Ending>();
  /** Faults since the claim under way began: they mark what that claim brings. */
  #sinceClaim: Fault[] = [];

  /** A claim begins: the faults before it are marked on the rows held then already. */
  claimBegins(): void {
    this.#sinceClaim = [];
  }

  /** `delivery`'s settle failed: the rows of its key behind it in `held` must not commit. */
  failed(delivery: PostgresQueueDelivery, held: Iterable<PostgresQueueDelivery>): void {
    const key = delivery.partitionKey;
    if (key === undefined) return;
    const fault = { key, id: delivery.held.id };
    this.#sinceClaim.push(fault);
    for (const row of held) this.#mark(row, fault);
  }

  /** The claim under way brought `claimed`: those behind a fault since it began must not commit. */
  claimed(claimed: readonly PostgresQueueDelivery[]): void {
    for (const fault of this.#sinceClaim) for (const row of claimed) this.#mark(row, fault);
  }

  /**
   * `delivery`'s settle begins: waits for the settles under way of earlier rows of its key, and
   * answers the function its own end calls (after `failed`, so the rows waiting see the mark).
   */
  async turn(delivery: PostgresQueueDelivery): Promise<() => void> {
    const key = delivery.partitionKey;
    const id = delivery.held.id;
    if (key === undefined) return () => {};
    const earlier = this.settlesBefore({ id, partitionKey: key });
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    this.#settling.set(id, { key, ended });
    await earlier;
    return () => {
      if (this.#settling.get(id)?.ended === ended) this.#settling.delete(id);
      end();
    };
  }

  /**
   * `row` is about to be handed to its handler: it counts as handled until it is settled or given
   * back (`forget`). Answers whether an earlier row of its key is handled or settling still, which
   * `handedBefore` waits for; the rows of `together` (the batch it is handed over with, which
   * settles only after the handler) are not waited for.
   */
  handing(delivery: PostgresQueueDelivery, together: ReadonlySet<bigint>): boolean {
    const key = delivery.partitionKey;
    if (key === undefined) return false;
    const row = { id: delivery.held.id, partitionKey: key };
    this.#handling.get(row.id)?.end();
    this.#handling.set(row.id, ending(key, delivery));
    return (
      this.#earlier(this.#settling, row, together).length +
        this.#earlier(this.#handling, row, together).length >
      0
    );
  }

  /**
   * When the earlier rows of `row`'s key handed over before it, and their settles, have ended;
   * those of `together` (its batch) left out.
   */
  async handedBefore(row: KeyedRow, together: ReadonlySet<bigint>): Promise<void> {
    await Promise.all([
      ...this.#earlier(this.#settling, row, together),
      ...this.#earlier(this.#handling, row, together),
    ]);
  }

  isBehind(delivery: PostgresQueueDelivery): boolean {
    return this.#behind.has(delivery.held.id);
  }

  /**
   * `transaction` with its statements gated: each waits for the settles under way of earlier rows
   * of `row`'s key, and fails when the row is held back behind one.
   */
  gate(row: KeyedRow, queue: string, transaction: HeldTransaction): HeldTransaction {
    if (row.partitionKey === undefined) return transaction;
    const inner = transaction.tx;
    const tx: Queryable = {
      query: async (text, values) => {
        await this.settlesBefore(row);
        if (this.#behind.has(row.id)) throw behindError(row.id, queue);
        return inner.query(text, values);
      },
    };
    return {
      tx,
      settle: (settle, undo) => transaction.settle(settle, undo),
      abandon: () => transaction.abandon(),
    };
  }

  /** When the settles under way of earlier rows of `row`'s key have ended. */
  async settlesBefore(row: KeyedRow): Promise<void> {
    await Promise.all(this.#earlier(this.#settling, row));
  }

  /** The ends of the entries of `of` for earlier rows of `row`'s key, but those of `skip`. */
  #earlier(
    of: ReadonlyMap<bigint, { readonly key: Uint8Array; readonly ended: Promise<void> }>,
    row: KeyedRow,
    skip: ReadonlySet<bigint> = noRows,
  ): Promise<void>[] {
    const key = row.partitionKey;
    const earlier: Promise<void>[] = [];
    if (key === undefined) return earlier;
    for (const [other, entry] of of) {
      if (other < row.id && !skip.has(other) && Buffer.compare(entry.key, key) === 0) {
        earlier.push(entry.ended);
      }
    }
    return earlier;
  }

  /** The delivery is settled, or given back (after `failed`, so the rows waiting see the mark). */
  forget(delivery: PostgresQueueDelivery): void {
    const id = delivery.held.id;
    this.#behind.delete(id);
    const handling = this.#handling.get(id);
    if (handling?.delivery !== delivery) return;
    handling.end();
    this.#handling.delete(id);
  }

  clear(): void {
    this.#behind.clear();
    for (const handling of this.#handling.values()) handling.end();
    this.#handling.clear();
    this.#sinceClaim = [];
  }

  #mark(row: PostgresQueueDelivery, fault: Fault): void {
    const key = row.partitionKey;
    if (row.held.id > fault.id && key !== undefined && Buffer.compare(key, fault.key) === 0) {
      this.#behind.add(row.held.id);
    }
  }
}

// The entries a producer sent (or will send once attached) and the broker has not confirmed yet, in
// sequence order: the broker confirms in that order, so a receipt settles the oldest, and after a
// reconnect every one of them goes again, in order.
import type { MessageIdData } from "../commands/shapes.js";
import { MessageId } from "../messageId.js";
import { Queue } from "../queue.js";

export type Resolve = (id: MessageId) => void;
export type Reject = (error: Error) => void;

/**
 * Who waits for an entry's receipt: the sends' resolve and reject functions, index for index, kept
 * in two arrays rather than an object per message (the producer's profile showed its per-message
 * objects, and the collector behind them, as a large share).
 */
export interface Waiters {
  readonly resolves: Resolve[];
  readonly rejects: Reject[];
}

export function rejectAll(waiters: Waiters, error: Error): void {
  for (const reject of waiters.rejects) reject(error);
}

/** One entry in flight: what was (or will be) sent, and who waits for its receipt. */
export interface OpSend {
  readonly sequenceId: bigint;
  readonly highestSequenceId: bigint;
  readonly numMessages: number;
  readonly batched: boolean;
  /** The whole SEND frame: the same bytes go again after a reconnect. */
  readonly frame: Buffer;
  readonly waiters: Waiters;
  readonly createdAt: number;
}

export class PendingSends {
  readonly #ops = new Queue<OpSend>();
  readonly #drainWaiters: (() => void)[] = [];

  /** How many entries wait for a receipt. */
  get length(): number {
    return this.#ops.length;
  }

  push(op: OpSend): void {
    this.#ops.push(op);
  }

  /** The entry the next receipt is for. */
  oldest(): OpSend | undefined {
    return this.#ops.peek();
  }

  /** The oldest entry is stored at `data`: its sends resolve with their ids. */
  confirm(data: MessageIdData | undefined, partition: number): void {
    const op = this.#ops.shift();
    if (op === undefined) return;
    const ledger = data ? BigInt.asIntN(64, data.ledgerId) : -1n;
    const entry = data ? BigInt.asIntN(64, data.entryId) : -1n;
    const resolves = op.waiters.resolves;
    if (op.batched)
      for (let i = 0; i < resolves.length; i++)
        resolves[i]!(new MessageId(ledger, entry, partition, i, op.numMessages));
    else resolves[0]!(new MessageId(ledger, entry, partition));
    this.#notifyDrained();
  }

  /** The oldest entry was refused: its sends reject with `error`. */
  refuse(error: Error): void {
    const op = this.#ops.shift();
    if (op === undefined) return;
    rejectAll(op.waiters, error);
    this.#notifyDrained();
  }

  /**
   * Rejects every entry older than `timeoutMs`, oldest first, with the error `failure` makes (asked
   * only when one is that old); a late receipt for one of them is then ignored.
   */
  expire(timeoutMs: number, failure: () => Error): void {
    const now = Date.now();
    let op = this.#ops.peek();
    if (op === undefined || now - op.createdAt < timeoutMs) return;
    const error = failure();
    while (op !== undefined && now - op.createdAt >= timeoutMs) {
      this.#ops.shift();
      rejectAll(op.waiters, error);
      op = this.#ops.peek();
    }
    this.#notifyDrained();
  }

  /** Rejects every entry: the producer failed or closed. */
  rejectAll(error: Error): void {
    for (const op of this.#ops.drain()) rejectAll(op.waiters, error);
    this.#notifyDrained();
  }

  /** Resolves once no entry waits for a receipt. */
  drained(): Promise<void> {
    if (this.#ops.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  #notifyDrained(): void {
    if (this.#ops.length > 0) return;
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
  }

  [Symbol.iterator](): IterableIterator<OpSend> {
    return this.#ops[Symbol.iterator]();
  }
}

import { assertBatchSize, type BatchSubscription } from "../capabilities.js";
import type { Delivery } from "../delivery.js";
import { RustStreamError } from "../errors.js";
import { batchesMark } from "../marks.js";
import { subscriptionIterator } from "../subscription.js";
import type { Arrivals } from "./arrivals.js";

/**
 * The pulling every subscription shares, written once: `next()` and `nextBatch()` check the
 * connection, answer `done` (or `[]`) once closed, throw the revoke error once the connection took
 * the subscription back, and refuse a second pull while one waits, then call the broker's `pull`.
 * `seekTo` starts a seek with the same two checks every broker makes (open, and a position of its
 * own kind). A broker's subscription extends it and implements `pull`, `assertOpen` and `close`.
 */
export abstract class PullSubscription<TDelivery extends Delivery>
  implements BatchSubscription<TDelivery>
{
  readonly [batchesMark] = true as const;
  abstract readonly name: string;
  #pulling = false;
  #closed = false;
  #revoked: RustStreamError | undefined;

  /** Throws the `closed` error once the connection has shut down. */
  abstract assertOpen(): void;

  /**
   * Waits for one delivery or more and answers at most `max`, in source order; `[]` once the
   * subscription was closed while waiting; throws the revoke error when revoked while waiting. The
   * base never calls it twice at once, nor once closed, and has checked `max`.
   */
  protected abstract pull(max: number): Promise<readonly TDelivery[]>;

  abstract close(): Promise<void>;

  async next(): Promise<IteratorResult<TDelivery, undefined>> {
    const [first] = await this.#guardedPull(1);
    return first === undefined ? { done: true, value: undefined } : { done: false, value: first };
  }

  async nextBatch(max: number): Promise<readonly TDelivery[]> {
    assertBatchSize(max);
    return this.#guardedPull(max);
  }

  [Symbol.asyncIterator](): AsyncIterator<TDelivery, undefined> {
    return subscriptionIterator(this);
  }

  /** Whether `close()` ran or the connection revoked the subscription. */
  protected get closed(): boolean {
    return this.#closed;
  }

  /** The error the connection revoked the subscription with, if it did. */
  protected get revokedWith(): RustStreamError | undefined {
    return this.#revoked;
  }

  /**
   * Waits for the next arrival on `arrivals` or a wake-up, then throws the revoke error when the
   * wake-up was the connection taking the subscription back (the shutdown revokes, then wakes).
   */
  protected async arrivalOn(arrivals: Arrivals<TDelivery>): Promise<void> {
    await arrivals.arrival();
    if (this.#revoked !== undefined) throw this.#revoked;
  }

  /** Marks the subscription closed; answers `false` when it already was, so a close runs once. */
  protected markClosed(): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    return true;
  }

  /** Marks the subscription revoked: closed, and every later pull throws `error`. */
  protected markRevoked(error: RustStreamError): void {
    this.#revoked ??= error;
    this.#closed = true;
  }

  /**
   * The checks a seek starts with: the connection is open, and `position` is of this broker's kind
   * (`kind` names it in the error, as "a Kafka position").
   */
  protected seekTo<TPosition>(
    position: unknown,
    isPosition: (value: unknown) => value is TPosition,
    kind: string,
  ): asserts position is TPosition {
    this.assertOpen();
    if (!isPosition(position)) {
      throw new RustStreamError(
        "foreign-value",
        `seek() got a position that is not ${kind}: pass delivery.position or parsePosition()`,
      );
    }
  }

  async #guardedPull(max: number): Promise<readonly TDelivery[]> {
    this.assertOpen();
    if (this.#revoked !== undefined) throw this.#revoked;
    if (this.#closed) return [];
    if (this.#pulling) {
      throw new RustStreamError(
        "invalid-argument",
        `a second next() on "${this.name}" while one is waiting: pull one at a time, or open another subscription to consume in parallel`,
      );
    }
    this.#pulling = true;
    try {
      return await this.pull(max);
    } finally {
      this.#pulling = false;
    }
  }
}

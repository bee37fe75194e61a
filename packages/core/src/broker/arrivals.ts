/**
 * What a broker pushed to a subscription (a listener's callback, a consumer's deliveries) and no
 * pull has taken yet, in arrival order, and the one pull that may be waiting for it
 * (`PullSubscription` never runs two pulls at once). Written once for every subscription fed by
 * pushes; the subscription wakes the waiting pull itself when it closes, is revoked or ends.
 */
export class Arrivals<T> {
  readonly #items: T[] = [];
  #wake: (() => void) | undefined;

  get length(): number {
    return this.#items.length;
  }

  /** Whether a pull is waiting now (a broker that asks its server for more only then reads it). */
  get awaited(): boolean {
    return this.#wake !== undefined;
  }

  /** Queues `item` and wakes the waiting pull. */
  push(item: T): void {
    this.#items.push(item);
    this.wake();
  }

  /** Resolves at the next arrival or wake-up, whichever comes first; at once when something waits. */
  arrival(): Promise<void> {
    if (this.#items.length > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
  }

  /** Takes the oldest `max` (fewer when fewer wait). */
  take(max: number): T[] {
    return this.#items.splice(0, max);
  }

  /** Takes everything that waits and wakes the waiting pull, which then finds nothing. */
  clear(): T[] {
    const all = this.#items.splice(0);
    this.wake();
    return all;
  }

  /** Wakes the waiting pull without an arrival (a close, a revoke, an end). */
  wake(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

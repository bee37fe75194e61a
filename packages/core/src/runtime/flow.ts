/**
 * How much of a subscriber's work is in flight, and the one pull loop waiting for room. Handlers
 * running, deliveries queued on busy lanes and settles still waiting on the broker all hold back the
 * next pull; whatever finishes wakes it.
 */
export class Flow {
  /** Handlers (or batches) running. */
  active = 0;
  /** Deliveries waiting on a busy lane. */
  queued = 0;
  /** Replies, copies and settles waiting on the broker. */
  settling = 0;
  #waiter: (() => void) | undefined;

  /** Resolves at the next `wake()`. */
  capacity(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  wake(): void {
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    waiter();
  }
}

import { RustStreamError } from "../errors.js";
import type { Coordinator } from "./inProcess.js";

/**
 * A {@link Coordinator} that keeps the balance and says when it is zero, which is when everything an
 * in-process transport handed out has been settled, or is parked by the runtime for a delayed retry
 * copy (the clock brings it back).
 */
export class CountingCoordinator implements Coordinator {
  #counted = 0;
  #parked = 0;
  #waiters: Array<() => void> = [];

  /** Deliveries made available and not yet settled for good, less those parked. */
  get outstanding(): number {
    // A transport may abandon a parked delivery (a rebalance, a close) before its delay is over:
    // the balance then stays at zero rather than going below it.
    return Math.max(0, this.#counted - this.#parked);
  }

  /** Deliveries held unsettled by the runtime while their retry copy waits for its delay. */
  get parked(): number {
    return this.#parked;
  }

  enqueued(count = 1): void {
    this.#counted += count;
  }

  consumed(count = 1): void {
    if (count > this.#counted) {
      // A transport that releases more than it counted would let a harness stop watching too early.
      throw new RustStreamError(
        "invalid-argument",
        `coordinator released ${count} with ${this.#counted} outstanding: the in-process ` +
          "transport must call consumed() once per delivery it counted with enqueued()",
      );
    }
    this.#counted -= count;
    this.#wakeIfIdle();
  }

  park(): void {
    this.#parked++;
    this.#wakeIfIdle();
  }

  unpark(): void {
    if (this.#parked === 0) {
      throw new RustStreamError(
        "invalid-argument",
        "coordinator unparked with nothing parked: the runtime must call unpark() once per park()",
      );
    }
    this.#parked--;
  }

  /** Resolves once nothing is outstanding (at once when nothing is). */
  whenIdle(): Promise<void> {
    if (this.outstanding === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #wakeIfIdle(): void {
    if (this.outstanding !== 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

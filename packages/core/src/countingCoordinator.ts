import { RustStreamError } from "./errors.js";
import type { Coordinator } from "./inProcess.js";

/**
 * A {@link Coordinator} that keeps the balance and says when it is zero, which is when everything an
 * in-process transport handed out has been settled.
 */
export class CountingCoordinator implements Coordinator {
  #outstanding = 0;
  #waiters: Array<() => void> = [];

  /** Deliveries made available and not yet settled for good. */
  get outstanding(): number {
    return this.#outstanding;
  }

  enqueued(count = 1): void {
    this.#outstanding += count;
  }

  consumed(count = 1): void {
    if (count > this.#outstanding) {
      // A transport that releases more than it counted would let a harness stop watching too early.
      throw new RustStreamError(
        "invalid-argument",
        `coordinator released ${count} with ${this.#outstanding} outstanding: the in-process ` +
          "transport must call consumed() once per delivery it counted with enqueued()",
      );
    }
    this.#outstanding -= count;
    if (this.#outstanding === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves once nothing is outstanding (at once when nothing is). */
  whenIdle(): Promise<void> {
    if (this.#outstanding === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}

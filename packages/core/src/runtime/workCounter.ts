/** Counts work the runtime started and has not finished, and says when there is none. */
export class WorkCounter {
  #count = 0;
  #waiters: Array<() => void> = [];

  get count(): number {
    return this.#count;
  }

  begin(): void {
    this.#count++;
  }

  end(): void {
    if (--this.#count === 0 && this.#waiters.length > 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Counts `promise` until it settles (it must not reject: callers catch first). */
  track(promise: Promise<unknown>): void {
    this.begin();
    promise.then(
      () => this.end(),
      () => this.end(),
    );
  }

  whenZero(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}

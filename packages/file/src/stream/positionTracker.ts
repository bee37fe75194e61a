/**
 * Precise at-least-once over a log: deliveries are handed out in sequence order, settled in any
 * order, and the position moves only over a run of settled ones, so an unsettled delivery is never
 * skipped. A requeued delivery stays unsettled, pinning the position until it is settled again.
 */
export class PositionTracker {
  /** Sequence numbers handed out, in order, from the oldest unsettled one. */
  #order: bigint[] = [];
  #head = 0;
  #settled = new Set<bigint>();
  #next: bigint;

  constructor(next: bigint) {
    this.#next = next;
  }

  /** One past the last sequence settled without a gap: where a restart resumes. */
  get next(): bigint {
    return this.#next;
  }

  delivered(seq: bigint): void {
    this.#order.push(seq);
  }

  /** Marks `seq` settled; answers the new position when it moved. */
  settle(seq: bigint): bigint | undefined {
    this.#settled.add(seq);
    const before = this.#next;
    while (this.#head < this.#order.length) {
      const first = this.#order[this.#head]!;
      if (!this.#settled.has(first)) break;
      this.#settled.delete(first);
      this.#head++;
      this.#next = first + 1n;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    return this.#next === before ? undefined : this.#next;
  }

  /**
   * After a seek: forget what was handed out. The stored position stays until a delivery from
   * the new place is settled, which then moves it there (back, for a seek back).
   */
  reset(): void {
    this.#order = [];
    this.#head = 0;
    this.#settled.clear();
  }
}

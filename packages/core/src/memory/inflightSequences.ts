/**
 * The sequences a memory group has out with its subscriptions, with the oldest at hand.
 *
 * A topic that holds more than it retains asks for its groups' oldest on every settle, and a scan of
 * a set costs as much as there is in flight (256 a subscription by default). Sequences go out in the
 * order taken, nearly always ascending (a redelivery is the exception), so they are also kept in a
 * sorted list whose settled entries are dropped from its front only when the oldest is asked for:
 * the same answer in amortised constant time.
 */
export class InflightSequences {
  readonly #members = new Set<bigint>();
  /** Ascending; may still hold settled sequences (and one taken twice), skipped when reached. */
  #order: bigint[] = [];
  #head = 0;

  get size(): number {
    return this.#members.size;
  }

  add(sequence: bigint): void {
    this.#members.add(sequence);
    const order = this.#order;
    if (order.length === this.#head || order[order.length - 1]! < sequence) {
      order.push(sequence);
    } else {
      let i = order.length;
      while (i > this.#head && order[i - 1]! > sequence) i--;
      order.splice(i, 0, sequence);
    }
    // Settled entries behind the front are dropped only when they reach it: rebuild once they
    // outnumber the live ones, so the list stays the size of what is in flight.
    if (order.length - this.#head > 2 * this.#members.size + 1024) this.#rebuild();
  }

  /** Whether `sequence` was in flight; it no longer is. */
  delete(sequence: bigint): boolean {
    return this.#members.delete(sequence);
  }

  clear(): void {
    this.#members.clear();
    this.#order = [];
    this.#head = 0;
  }

  /** The oldest sequence in flight, or `undefined` when none is. */
  oldest(): bigint | undefined {
    const order = this.#order;
    while (this.#head < order.length && !this.#members.has(order[this.#head]!)) this.#head++;
    if (this.#head === order.length) {
      this.#order = [];
      this.#head = 0;
      return undefined;
    }
    // Compact now and then instead of shifting on every step.
    if (this.#head > 1024 && this.#head * 2 > order.length) {
      this.#order = order.slice(this.#head);
      this.#head = 0;
    }
    return this.#order[this.#head];
  }

  #rebuild(): void {
    this.#order = [...this.#members].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.#head = 0;
  }
}

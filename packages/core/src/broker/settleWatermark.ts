import { RustStreamError } from "../errors.js";

/**
 * Precise at-least-once over one ordered log (a file stream, a Kafka partition): deliveries are
 * handed out in offset order and settled in any order, and the position to store is the first
 * offset handed out and not yet settled, or one past the highest handed out when none is open. Only
 * offsets handed out are tracked, so gaps in the log (transaction markers, compacted or trimmed
 * records) never hold the position back, and lanes settling out of order never move it past a
 * delivery still open. A requeued delivery stays open: it pins the position until it is settled.
 *
 * One watermark serves one run of hand-outs. After a seek (or a partition assigned again) the
 * broker starts a new one and drops the settles of deliveries handed out before it.
 */
export class SettleWatermark {
  /** Offsets handed out, in order; the front ones are popped once settled. */
  #open: bigint[] = [];
  #head = 0;
  /** Settled out of order, waiting for the ones before them. */
  readonly #settled = new Set<bigint>();
  #highest: bigint | undefined;
  /** The last position this watermark answered (or the first offset handed out). */
  #stored: bigint | undefined;

  /** Whether `offset` runs ahead of everything handed out so far (else the log replays). */
  ahead(offset: bigint): boolean {
    return this.#highest === undefined || offset > this.#highest;
  }

  /** Records a hand-out; offsets must come in increasing order (check `ahead()` first). */
  delivered(offset: bigint): void {
    if (!this.ahead(offset)) {
      throw new RustStreamError(
        "invalid-argument",
        `SettleWatermark.delivered(${offset}) after ${this.#highest}: hand-outs come in increasing order; start a new watermark when the log replays`,
      );
    }
    this.#open.push(offset);
    this.#highest = offset;
    // Where the run starts: the stored position already is this (the log's start, or where a seek
    // put it), so answering it again would be a store that moves nothing.
    this.#stored ??= offset;
  }

  /** Marks `offset` settled; answers the position to store when it moved forward. */
  settle(offset: bigint): bigint | undefined {
    if (this.#highest === undefined || offset > this.#highest) return undefined;
    // Settled in order (one lane, or the oldest of several): the front pops without going through
    // the set, whose bigint hashing was most of a tracked settle's cost.
    if (this.#head < this.#open.length && this.#open[this.#head] === offset) this.#head++;
    else this.#settled.add(offset);
    while (
      this.#settled.size > 0 &&
      this.#head < this.#open.length &&
      this.#settled.delete(this.#open[this.#head]!)
    ) {
      this.#head++;
    }
    // Keep the array from growing for ever: drop the popped front now and then.
    if (this.#head > 1024 && this.#head * 2 > this.#open.length) {
      this.#open = this.#open.slice(this.#head);
      this.#head = 0;
    }
    const position = this.#head < this.#open.length ? this.#open[this.#head]! : this.#highest + 1n;
    if (this.#stored !== undefined && position <= this.#stored) return undefined;
    this.#stored = position;
    return position;
  }
}

/**
 * What a named consumer stores: the sequence number to resume at, and the messages before it that
 * are still unsettled (`open`, ascending), which a restart delivers again before going on from
 * `next`. Everything else below `next` was settled.
 */
export interface StoredPosition {
  readonly next: bigint;
  readonly open: readonly bigint[];
}

/**
 * At most this many unsettled messages are listed before `next`; past it the position falls back to
 * the oldest unsettled one (a restart then replays everything from there, as before any list).
 */
export const MAX_OPEN = 4096;

/** What to do with a message read from the file. */
export type Admission = "deliver" | "settled" | "copied";

/**
 * A named consumer's position, kept so that a held message does not hold everything read after it.
 *
 * A message the runtime keeps unsettled for a while (a retry it delays, publishing the copy only
 * when the delay is over) used to pin the stored position, `next`, to itself: a restart then read
 * again every message settled since, about a delay's worth. Here the stored position goes past the
 * highest settled message and lists the unsettled ones before it, so a restart delivers only those
 * and what had not been settled after them.
 *
 * Messages come from the file in sequence order (a requeue serves one again without a new read).
 */
export class ConsumerPosition {
  /** Below it, only `#unsettled` members are unsettled; undefined after a seek, until a read. */
  #floor: bigint | undefined;
  #highestSettled: bigint | undefined;
  /** Read (or listed open by the last process) and not settled yet. */
  readonly #unsettled = new Set<bigint>();
  /** The last process's `open` not read yet, ascending. */
  #carried: readonly bigint[];
  #carriedAt = 0;
  /** Messages whose copy (retry or dead letter) this consumer already wrote into the file. */
  #copied: ReadonlySet<bigint>;
  #last: StoredPosition;

  constructor(stored: StoredPosition, copied: ReadonlySet<bigint> = new Set()) {
    this.#floor = stored.next;
    this.#carried = stored.open;
    for (const seq of stored.open) this.#unsettled.add(seq);
    this.#copied = copied;
    this.#last = stored;
  }

  /**
   * Whether the message at `seq` is delivered: not when the last process settled it (`settled`), nor
   * when its copy is in the file (`copied`: settled here, since the copy took its place).
   */
  admit(seq: bigint): Admission {
    const floor = this.#floor;
    if (floor === undefined) {
      this.#floor = seq;
      return "deliver";
    }
    // A listed message the file no longer has (read past it) is not waited for.
    while (this.#carriedAt < this.#carried.length && this.#carried[this.#carriedAt]! < seq) {
      this.#unsettled.delete(this.#carried[this.#carriedAt++]!);
    }
    const carried = this.#carried[this.#carriedAt] === seq;
    if (carried) this.#carriedAt++;
    if (seq < floor && !carried) return "settled";
    if (this.#copied.has(seq)) {
      this.settle(seq);
      return "copied";
    }
    return "deliver";
  }

  /** A message handed out, to be settled. */
  delivered(seq: bigint): void {
    this.#unsettled.add(seq);
  }

  settle(seq: bigint): void {
    this.#unsettled.delete(seq);
    if (this.#highestSettled === undefined || seq > this.#highestSettled)
      this.#highestSettled = seq;
  }

  /** After a seek: nothing handed out before counts, nothing read is skipped. */
  reset(): void {
    this.#floor = undefined;
    this.#highestSettled = undefined;
    this.#unsettled.clear();
    this.#carried = [];
    this.#carriedAt = 0;
    this.#copied = new Set();
  }

  /** What to store now. */
  snapshot(): StoredPosition {
    const now = this.#now();
    if (now === this.#last) return now;
    this.#last = now.open.length > MAX_OPEN ? { next: now.open[0]!, open: [] } : now;
    return this.#last;
  }

  /**
   * The messages up to `tip` (the stream's last sequence in the file) not settled: those listed
   * before the position, and every one from it on (handed out or not). After a seek, until the
   * first read, the position stored last.
   */
  unsettledUpTo(tip: bigint): number {
    const { next, open } = this.#now();
    // Sequences start at 1: a consumer from the beginning stores 0.
    const from = next > 1n ? next : 1n;
    return open.length + (tip >= from ? Number(tip - from + 1n) : 0);
  }

  /** The position as it stands, every unsettled message below it listed. */
  #now(): StoredPosition {
    const floor = this.#floor;
    if (floor === undefined) return this.#last;
    const high = this.#highestSettled;
    const next = high !== undefined && high >= floor ? high + 1n : floor;
    const open = [...this.#unsettled].filter((seq) => seq < next).sort(ascending);
    return { next, open };
  }
}

function ascending(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

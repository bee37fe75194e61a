// The watermark behind `tracked` commits, per partition: the position to commit is the first
// offset handed out and not yet settled, or one past the highest handed out when none is open. Only
// offsets that were handed out are tracked, so gaps in the log (transaction markers, compacted
// records) never hold the position back, and lanes settling out of order never move it past a
// delivery still open. Each partition's books carry a generation, renewed when it is assigned,
// revoked or sought: a settle of an older generation is dropped, never committed.

class PartitionBook {
  readonly generation: number;
  /** Offsets handed out, in order; the front ones are popped once settled. */
  readonly #open: bigint[] = [];
  #head = 0;
  readonly #settled = new Set<bigint>();
  #highest: bigint | undefined;
  /** The last position this book asked to store (or the first offset it saw). */
  #stored: bigint | undefined;

  constructor(generation: number) {
    this.generation = generation;
  }

  /** Whether `offset` runs ahead of everything handed out so far (else the partition replays). */
  ahead(offset: bigint): boolean {
    return this.#highest === undefined || offset > this.#highest;
  }

  delivered(offset: bigint): void {
    this.#open.push(offset);
    this.#highest = offset;
    // Where the books start: the committed position already is this (the partition's start, or
    // where a seek put it), so storing it again would be a commit that moves nothing.
    this.#stored ??= offset;
  }

  /** Settles `offset`; answers the position to store when it moved. */
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
      this.#open.splice(0, this.#head);
      this.#head = 0;
    }
    const position = this.#head < this.#open.length ? this.#open[this.#head]! : this.#highest + 1n;
    if (this.#stored !== undefined && position <= this.#stored) return undefined;
    this.#stored = position;
    return position;
  }
}

/** The books of every partition a subscription holds. */
export class Tracker {
  readonly #books = new Map<string, PartitionBook>();
  #generations = 0;

  /** Opens fresh books for a partition (assigned, sought): earlier settles of it are dropped. */
  reset(key: string): number {
    const book = new PartitionBook(++this.#generations);
    this.#books.set(key, book);
    return book.generation;
  }

  /** Closes a partition's books (revoked): every later settle of it is dropped. */
  forget(key: string): void {
    this.#books.delete(key);
  }

  /** Records a hand-out; answers the generation the delivery settles under. */
  delivered(key: string, offset: bigint): number {
    let book = this.#books.get(key);
    // A partition that replays without a seek of ours (the engine rewound it): start over.
    if (book === undefined || !book.ahead(offset)) {
      this.reset(key);
      book = this.#books.get(key)!;
    }
    book.delivered(offset);
    return book.generation;
  }

  /** Settles a hand-out; answers the position to store, or `undefined` (nothing moved, or stale). */
  settle(key: string, generation: number, offset: bigint): bigint | undefined {
    const book = this.#books.get(key);
    if (book === undefined || book.generation !== generation) return undefined;
    return book.settle(offset);
  }

  /** Whether a delivery of this generation still belongs to the partition's books. */
  current(key: string, generation: number): boolean {
    return this.#books.get(key)?.generation === generation;
  }
}

import { SettleWatermark } from "@ruststream/core/broker";

// The watermark behind `tracked` commits, per partition: core's SettleWatermark (the position to
// commit is the first offset handed out and not yet settled). Each partition's books carry a
// generation, renewed when it is assigned, revoked or sought: a settle of an older generation is
// dropped, never committed.

/** One partition's books: its watermark and the generation its deliveries settle under. */
interface PartitionBook {
  readonly generation: number;
  readonly watermark: SettleWatermark;
}

/** The books of every partition a subscription holds. */
export class Tracker {
  readonly #books = new Map<string, PartitionBook>();
  #generations = 0;

  /** Opens fresh books for a partition (assigned, sought): earlier settles of it are dropped. */
  reset(key: string): number {
    const book = { generation: ++this.#generations, watermark: new SettleWatermark() };
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
    if (book === undefined || !book.watermark.ahead(offset)) {
      this.reset(key);
      book = this.#books.get(key)!;
    }
    book.watermark.delivered(offset);
    return book.generation;
  }

  /** Settles a hand-out; answers the position to store, or `undefined` (nothing moved, or stale). */
  settle(key: string, generation: number, offset: bigint): bigint | undefined {
    const book = this.#books.get(key);
    if (book === undefined || book.generation !== generation) return undefined;
    return book.watermark.settle(offset);
  }

  /** Whether a delivery of this generation still belongs to the partition's books. */
  current(key: string, generation: number): boolean {
    return this.#books.get(key)?.generation === generation;
  }
}

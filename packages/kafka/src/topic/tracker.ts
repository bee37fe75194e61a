import { SettleWatermark } from "@ruststream/core/broker";

// The watermark behind `tracked` commits, per partition: core's SettleWatermark (the position to
// commit is the first offset handed out and not yet settled). A partition gets fresh books when it
// is assigned, revoked or sought, and the old ones close: a settle under closed books is dropped,
// never committed.

/**
 * One partition's books for one run of hand-outs. A delivery keeps the books it was handed out
 * under, so its settle goes straight to them: no partition key to look up, no map to search, on
 * the path every tracked record takes. Closed books (the partition sought, assigned again or
 * revoked since) drop every settle.
 */
export class PartitionBook {
  readonly watermark = new SettleWatermark();
  #open = true;

  /** Whether these are still the partition's books (a delivery of them may settle or come back). */
  get open(): boolean {
    return this.#open;
  }

  close(): void {
    this.#open = false;
  }

  /** Settles a hand-out; answers the position to store, or `undefined` (nothing moved, or closed). */
  settle(offset: bigint): bigint | undefined {
    return this.#open ? this.watermark.settle(offset) : undefined;
  }
}

/** The books of every partition a subscription holds. */
export class Tracker {
  readonly #books = new Map<string, PartitionBook>();

  /** Opens fresh books for a partition (assigned, sought): earlier settles of it are dropped. */
  reset(key: string): PartitionBook {
    this.#books.get(key)?.close();
    const book = new PartitionBook();
    this.#books.set(key, book);
    return book;
  }

  /** Closes a partition's books (revoked): every later settle of it is dropped. */
  forget(key: string): void {
    this.#books.get(key)?.close();
    this.#books.delete(key);
  }

  /** Records a hand-out; answers the books the delivery settles under. */
  delivered(key: string, offset: bigint): PartitionBook {
    let book = this.#books.get(key);
    // A partition that replays without a seek of ours (the engine rewound it): start over.
    if (book === undefined || !book.watermark.ahead(offset)) book = this.reset(key);
    book.watermark.delivered(offset);
    return book;
  }
}

import type { DecodedMessage } from "../format/types.js";
import { readMark } from "../transactionMark.js";

interface Open {
  readonly start: number;
  readonly count: number;
  /** The index the transaction's next frame carries. */
  next: number;
  /** The reader's own frames of it (its key, past its skip), in file order. */
  readonly held: DecodedMessage[];
}

/**
 * What a reader does with a frame: hand it out as any other (`pass`), keep it back because a
 * transaction it belongs to is open (`held`), or hand out the transaction it completes
 * (`complete`: take them with `release()`).
 */
export type HoldVerdict = "pass" | "held" | "complete";

/**
 * A reader's watch over the transactions in what it reads (wire/transactionMark.ts): it sees every
 * frame, of every key, in file order, and keeps the reader's own frames of a transaction back
 * until the transaction's last frame is read whole. A transaction that something else interrupts (a
 * writer that knew nothing of it wrote on after a crash) never completes: its frames are dropped.
 */
export class TransactionHold {
  #open: Open | undefined;

  /** Where the open transaction begins, while one is. */
  get openAt(): number | undefined {
    return this.#open?.start;
  }

  /**
   * Takes the next frame read, `own` when the reader would hand it out. `readFrom` is where the
   * reader started: a transaction it started inside of has its earlier frames before that.
   */
  take(frame: DecodedMessage, own: boolean, readFrom: number): HoldVerdict {
    const mark = readMark(frame.payload);
    const open = this.#open;
    if (open !== undefined) {
      if (mark?.start === open.start && mark.count === open.count && mark.index === open.next) {
        if (own) open.held.push(frame);
        open.next++;
        return mark.index === mark.count ? "complete" : "held";
      }
      this.#open = undefined;
    }
    if (mark === undefined || mark.index === mark.count) return "pass";
    // A first frame is where its mark says the transaction starts; a later one may open the
    // reader's view only when the reader started after that start. Any other mark (a header
    // copied onto another message) marks nothing.
    const opens = mark.index === 1 ? frame.offset === mark.start : mark.start < readFrom;
    if (!opens) return "pass";
    this.#open = {
      start: mark.start,
      count: mark.count,
      next: mark.index + 1,
      held: own ? [frame] : [],
    };
    return "held";
  }

  /** The reader's frames of the transaction just completed, in file order. */
  release(): DecodedMessage[] {
    const held = this.#open?.held ?? [];
    this.#open = undefined;
    return held;
  }

  /** Forgets an open transaction: the reader reads again from a place before it, or elsewhere. */
  reset(): void {
    this.#open = undefined;
  }
}

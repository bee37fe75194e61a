// What every consumer row is given and what it answers, and the per-message bookkeeping they all
// share, so the rows differ only in how they talk to Redis.

import type { Target } from "./target.js";

/** One row's run over one fresh key (or channel) holding, or about to receive, `count` messages. */
export interface Trial {
  readonly target: Target;
  /** The stream or list key, or the channel. */
  readonly key: string;
  readonly group: string;
  readonly count: number;
  /** Pub/sub only: tells the generator to publish; called once the consumer is subscribed. */
  readonly publish?: () => Promise<unknown>;
  /** Pub/sub only: what the consumer has received, so the generator stays within its window. */
  readonly progress?: (received: number) => void;
}

export interface Measured {
  /** From the first message in hand to the last one handled and (where it acks) acknowledged. */
  readonly ms: number;
  /** Payload bytes the consumer saw: checked against count x 512, so no row skips its reads. */
  readonly bytes: number;
}

export type Consumer = (trial: Trial) => Promise<Measured>;

/** How often a pub/sub consumer reports progress to the generator (a power of two, for the mask). */
export const progressEvery = 512;

/** Counts what a consumer handled; resolves `done` at the last message. */
export class Tally {
  readonly count: number;
  readonly done: Promise<void>;
  began = 0;
  endedAt = 0;
  received = 0;
  bytes = 0;
  readonly #progress: ((received: number) => void) | undefined;
  #finish!: () => void;

  constructor(trial: Trial) {
    this.count = trial.count;
    this.#progress = trial.progress;
    this.done = new Promise((resolve) => {
      this.#finish = resolve;
    });
  }

  /** The whole "handler" of every row: note the payload, count it. */
  add(length: number): void {
    if (this.received === 0) this.began = performance.now();
    this.bytes += length;
    this.received++;
    if (this.#progress !== undefined && (this.received & (progressEvery - 1)) === 0) {
      this.#progress(this.received);
    }
    if (this.received === this.count) {
      this.endedAt = performance.now();
      this.#finish();
    }
  }

  /** Measured up to now: call after the last acknowledgement was answered. */
  measured(): Measured {
    return { ms: performance.now() - this.began, bytes: this.bytes };
  }
}

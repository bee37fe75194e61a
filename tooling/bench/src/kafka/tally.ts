// What every Kafka row measures the same way: the orders its handler saw (count and sum of ids), the
// span from the first order in hand to the last one handled, and the process's CPU over that span.
import type { Order } from "../redis/drain/order.js";

export interface Drained {
  /** From the first order in hand to the last one handled (and, for the app, settled). */
  readonly ms: number;
  readonly messages: number;
  /** The sum of the ids decoded: checked against 0 + 1 + ... + (count - 1). */
  readonly idSum: bigint;
  /** This process's CPU time over the same span (user + system, librdkafka's threads included). */
  readonly cpuMs: number;
}

function cpuMsNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Counts the orders a row decoded; resolves `done` at the last one. */
export class Tally {
  readonly count: number;
  readonly done: Promise<void>;
  seen = 0;
  // A number: the ids of a few million orders sum to well under 2^53.
  #idSum = 0;
  #begun = false;
  #began = 0;
  #cpuAtStart = 0;
  #finish!: () => void;

  constructor(count: number) {
    this.count = count;
    this.done = new Promise((resolve) => {
      this.#finish = resolve;
    });
  }

  /**
   * Start the clock if nothing has yet: a row whose orders come back before they count (a retry
   * storm's first attempts) times from its first order in hand, not from its first one counted.
   */
  begin(): void {
    if (this.#begun) return;
    this.#begun = true;
    this.#began = performance.now();
    this.#cpuAtStart = cpuMsNow();
  }

  /** Every row's whole "handler": note the order's id. */
  add(order: Order): void {
    this.begin();
    this.#idSum += order.id;
    if (++this.seen === this.count) this.#finish();
  }

  /** Measured up to now: call once the last order is handled (and settled, where the row settles). */
  drained(): Drained {
    return {
      ms: performance.now() - this.#began,
      messages: this.seen,
      idSum: BigInt(this.#idSum),
      cpuMs: cpuMsNow() - this.#cpuAtStart,
    };
  }
}

// Core NATS keeps nothing, so a core row cannot drain a pre-filled subject: the generator
// (generator.ts, a process of its own) publishes while the row listens, never more than `window`
// orders ahead of what the row reported handled. The row reports on the credit subject every
// `every` orders (one small publish, the same in every row), so it is never overrun (nothing is
// dropped, and a row that lost an order fails) and the generator never waits on an idle row.

/** The subject a core row asks the generator to fill on (a request; answered once it starts). */
export const fillSubject = "bench.nats.fill";

/** Where the row for `subject` reports what it has handled. */
export const creditSubject = (subject: string) => `${subject}.credit`;

/** Orders between two reports. */
export const every = 512;

/** Orders the generator runs ahead of the last report: 4096 of 512 bytes, 2 MB. */
export const window = 4_096;

/** What a core row asks the generator for. */
export interface FillRequest {
  readonly subject: string;
  readonly count: number;
}

/** Counts what a row handled, reporting it every `every` orders through `report`. */
export class Credit {
  #handled = 0;
  readonly #report: (handled: number) => void;

  constructor(report: (handled: number) => void) {
    this.#report = report;
  }

  note(): void {
    if (++this.#handled % every === 0) this.#report(this.#handled);
  }
}

/**
 * A histogram's counts kept as plain numbers, per bucket and not cumulative (the last one is past
 * the largest bound): observed on the dispatch path, exported at scrape time (`TalliedHistogram`).
 */
export class Buckets {
  readonly bounds: readonly number[];
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = [...bounds.map(() => 0), 0];
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

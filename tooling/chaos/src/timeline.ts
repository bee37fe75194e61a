// Times of the handlings the runner received and of the faults it injected, in ms since the
// scenario started, and what the report derives from them.

export interface FaultRecord {
  readonly kind: string;
  /** What it hit: a service replica, the broker, the proxy. */
  readonly target: string;
  /** When it was injected. */
  readonly atMs: number;
  /** When it was healed (the process restarted, the broker serving, the toxic removed). */
  readonly healedMs: number;
  /** From the heal to the first handling after it (null: none came). */
  readonly recoveryMs: number | null;
}

/** The first handling at or after `from` (times ascending), else undefined. */
function firstAtOrAfter(times: readonly number[], from: number): number | undefined {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((times[mid] as number) < from) low = mid + 1;
    else high = mid;
  }
  return times[low];
}

/** The time to recover after a heal: until the first handling that followed it. */
export function recoveryAfter(times: readonly number[], healedMs: number): number | null {
  const next = firstAtOrAfter(times, healedMs);
  return next === undefined ? null : next - healedMs;
}

/** The longest gap between two handlings in a row (ascending times), from the first to the last. */
export function longestPause(times: readonly number[]): number {
  let longest = 0;
  for (let i = 1; i < times.length; i++) {
    longest = Math.max(longest, (times[i] as number) - (times[i - 1] as number));
  }
  return longest;
}

/** Handlings in each second from the start (ascending times): the throughput a chart draws. */
export function perSecond(times: readonly number[]): number[] {
  const counts: number[] = [];
  for (const t of times) {
    const second = Math.max(0, Math.floor(t / 1000));
    while (counts.length <= second) counts.push(0);
    counts[second] = (counts[second] as number) + 1;
  }
  return counts;
}

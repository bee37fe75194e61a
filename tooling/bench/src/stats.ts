// The summary every bench prints and checks in: best / median / worst over interleaved rounds, and
// the spread that decides whether a comparison with the row means anything.
import osModule from "node:os";

/** A spread (best - worst) wider than this share of the median makes the row inconclusive. */
export const inconclusiveSpread = 0.1;

export interface RowSummary {
  readonly name: string;
  readonly best: number;
  readonly median: number;
  readonly worst: number;
  /** (best - worst) / median. */
  readonly spread: number;
  readonly inconclusive: boolean;
  readonly rates: readonly number[];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Each round's figure of one row over the same round's figure of another: the two ran seconds
 * apart, so a round that ran slower for every row alike cancels out, where a ratio of two medians
 * does not. Pass CPU per message the other way round (baseline over row) to read above 1 as less.
 */
export function byRound(row: readonly number[], baseline: readonly number[]): number[] {
  if (row.length !== baseline.length) {
    throw new Error(`rounds differ: ${row.length} against ${baseline.length}`);
  }
  return row.map((v, i) => v / baseline[i]!);
}

/** Per-round ratios as "median (lowest-highest)". */
export function ratioRange(ratios: readonly number[], digits = 2): string {
  const f = (n: number) => n.toFixed(digits);
  return `${f(median(ratios))} (${f(Math.min(...ratios))}-${f(Math.max(...ratios))})`;
}

/** Rates are "higher is better" (messages per second). */
export function summarize(name: string, rates: readonly number[]): RowSummary {
  const best = Math.max(...rates);
  const worst = Math.min(...rates);
  const med = median(rates);
  const spread = (best - worst) / med;
  return {
    name,
    best,
    median: med,
    worst,
    spread,
    inconclusive: spread > inconclusiveSpread,
    rates: [...rates],
  };
}

/** The table as printed, one line per row; `format` renders a rate. */
export function tableLines(
  rows: readonly RowSummary[],
  format: (rate: number) => string,
): string[] {
  const width = Math.max(20, ...rows.map((r) => r.name.length + 2));
  const lines = [
    `${"row".padEnd(width)}${"best".padEnd(14)}${"median".padEnd(14)}${"worst".padEnd(14)}spread`,
  ];
  for (const r of rows) {
    lines.push(
      `${r.name.padEnd(width)}${format(r.best).padEnd(14)}${format(r.median).padEnd(14)}${format(r.worst).padEnd(14)}${(r.spread * 100).toFixed(1)}%${r.inconclusive ? " (inconclusive)" : ""}`,
    );
  }
  return lines;
}

/** What every result file records about where it ran. */
export function machine(): { node: string; cpus: number; cpu: string } {
  return {
    node: process.version,
    cpus: osModule.cpus().length,
    cpu: osModule.cpus()[0]?.model ?? "unknown",
  };
}

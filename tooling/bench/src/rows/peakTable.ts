// The memory columns every drain bench prints beside its rates and writes into its results: per row,
// the peak resident set of the row's process in each round, their median and range, and the
// sampled peaks of its JS heap and Buffers; and a row's peak over its raw loop's (issue 26: the full
// app within 1.3 times its raw loop's peak).
import { median } from "../stats.js";
import type { RowMemory } from "./protocol.js";

/** Issue 26's bound: the full app's peak resident set at most this times its raw loop's. */
export const peakRssBound = 1.3;

/** A row's memory over the rounds, MB, as the results files hold it. */
export interface PeakColumns {
  /** The row's process's peak resident set, per round. */
  readonly peakRssMB: number[];
  readonly peakRssMBMedian: number;
  /** Sampled over the timed run, per round: V8's heap in use, and memory outside it (Buffers). */
  readonly peakHeapUsedMB: number[];
  readonly peakExternalMB: number[];
}

/** One row's peak resident set over another's, at the medians. */
export interface PeakRatio {
  readonly row: string;
  readonly against: string;
  readonly peakRss: number;
  /** Against the bound, where it applies (the full app over its raw loop); absent elsewhere. */
  readonly withinBound?: boolean;
}

const mb = (bytes: number) => bytes / 1e6;
const push = (map: Map<string, number[]>, key: string, value: number) =>
  map.set(key, [...(map.get(key) ?? []), value]);

export class PeakTable {
  readonly #rss = new Map<string, number[]>();
  readonly #heap = new Map<string, number[]>();
  readonly #external = new Map<string, number[]>();

  /** One round of the row `key`. */
  add(key: string, memory: RowMemory): void {
    push(this.#rss, key, mb(memory.maxRssKiB * 1024));
    if (memory.sampled !== undefined) {
      push(this.#heap, key, mb(memory.sampled.heapUsed));
      push(this.#external, key, mb(memory.sampled.external));
    }
  }

  columns(key: string): PeakColumns {
    const rss = this.#rss.get(key) ?? [];
    return {
      peakRssMB: rss,
      peakRssMBMedian: rss.length === 0 ? Number.NaN : median(rss),
      peakHeapUsedMB: this.#heap.get(key) ?? [],
      peakExternalMB: this.#external.get(key) ?? [],
    };
  }

  /**
   * `row`'s median peak over `against`'s, if both ran; held to the bound when `bounded` (the full
   * app over its raw loop), only reported otherwise (ours over another client's, another language's).
   */
  ratio(row: string, against: string, bounded = true): PeakRatio | undefined {
    const top = this.#rss.get(row);
    const bottom = this.#rss.get(against);
    if (top === undefined || bottom === undefined) return undefined;
    const peakRss = median(top) / median(bottom);
    return { row, against, peakRss, ...(bounded ? { withinBound: peakRss <= peakRssBound } : {}) };
  }

  /** The printed lines: each row's peak, and each ratio asked for. */
  lines(
    rows: readonly { readonly key: string; readonly name: string }[],
    ratios: readonly PeakRatio[] = [],
  ): string[] {
    const lines = [
      "peak memory, median (the row's process: resident set (range); over the timed run: JS heap used, external):",
    ];
    const nameOf = new Map(rows.map((r) => [r.key, r.name]));
    for (const { key, name } of rows) {
      const c = this.columns(key);
      if (c.peakRssMB.length === 0) continue;
      const range = `${Math.min(...c.peakRssMB).toFixed(0)}-${Math.max(...c.peakRssMB).toFixed(0)}`;
      const sampled =
        c.peakHeapUsedMB.length === 0
          ? ""
          : `; heap ${median(c.peakHeapUsedMB).toFixed(0)} MB, external ${median(c.peakExternalMB).toFixed(0)} MB`;
      lines.push(`  ${name}: ${c.peakRssMBMedian.toFixed(0)} MB RSS (${range})${sampled}`);
    }
    if (ratios.length > 0) {
      lines.push(
        `peak RSS ratios at the medians (the full app over its raw loop: at most ${peakRssBound}):`,
      );
    }
    for (const r of ratios) {
      const verdict =
        r.withinBound === undefined ? "" : r.withinBound ? " (within)" : ` (over ${peakRssBound})`;
      lines.push(
        `  ${nameOf.get(r.row) ?? r.row} / ${nameOf.get(r.against) ?? r.against}: ${r.peakRss.toFixed(2)}${verdict}`,
      );
    }
    return lines;
  }
}

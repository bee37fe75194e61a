// What a bench hands a row's process (rowProcess.ts forks rowChild.ts) and what it answers, and what
// a bench's row module exports for that process to run.

/**
 * A module of rows that run in a process of their own: `runRow` runs the row named `key` once on
 * `input` (a bench's own trial: a topic, a stream, a file, already filled) and answers what it
 * measured. Everything in the answer must survive IPC's structured clone (bigints do).
 */
export interface RowModule {
  runRow(key: string, input: unknown): Promise<unknown>;
}

/** One row in one round: an untimed warm-up run (so the JIT has seen every path), then the timed one. */
export interface RowJob {
  /** The row module's file URL (`new URL("./rowTable.ts", import.meta.url).href`). */
  readonly module: string;
  readonly key: string;
  /**
   * JSON: it travels as the process's argument. Absent for a row module that warms itself inside
   * its timed run (bench:ops warms each of its two paths before timing it).
   */
  readonly warm?: unknown;
  readonly timed: unknown;
}

/** The highest of each of `process.memoryUsage()`'s figures sampled over the timed run, in bytes. */
export interface MemoryPeaks {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

/** A row's process's memory: its peak resident set over its whole life, and the sampled peaks. */
export interface RowMemory {
  /** `process.resourceUsage().maxRSS` once the timed run ended: the process's peak, in KiB. */
  readonly maxRssKiB: number;
  /** Sampled over the timed run; absent for a process that is not Node (a Rust program, the JVM). */
  readonly sampled?: MemoryPeaks;
}

export type RowReply =
  | { readonly kind: "ran"; readonly measured: unknown; readonly memory: RowMemory }
  | { readonly kind: "failed"; readonly message: string };

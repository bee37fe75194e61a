// What main.ts and the producer process (producer.ts) say to each other over IPC.

export type ProducerCommand =
  /** Create `topic` with `partitions` partitions and write orders 0..count-1 round robin over them. */
  | {
      readonly kind: "fill";
      readonly topic: string;
      readonly partitions: number;
      readonly count: number;
    }
  /** Answer how far `group` committed on `topic` against the partitions' ends, then delete it. */
  | { readonly kind: "finish"; readonly topic: string; readonly group: string }
  | { readonly kind: "exit" };

export type ProducerReply =
  | { readonly kind: "ready" }
  | { readonly kind: "filled"; readonly ms: number }
  | {
      readonly kind: "finished";
      /** Records past the group's committed offset, summed over the partitions. */
      readonly lag: number;
      /** Per partition: committed / end, for the error when the lag is not 0. */
      readonly partitions: string;
    }
  | { readonly kind: "failed"; readonly message: string };

// What main.ts hands a row's process (rowProcess.ts forks rowChild.ts) and what it answers.

/** A topic already filled with `count` orders, and a group nobody used before. */
export interface Drain {
  readonly topic: string;
  readonly group: string;
  readonly count: number;
}

/** One row in one round: an untimed warm-up drain, then the timed one. */
export interface RowJob {
  readonly key: string;
  readonly brokers: string;
  readonly warm: Drain;
  readonly timed: Drain;
}

/** The highest of each of `process.memoryUsage()`'s figures sampled over the timed drain, in bytes. */
export interface MemoryPeaks {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

export type RowReply =
  | {
      readonly kind: "drained";
      readonly ms: number;
      readonly messages: number;
      /** A decimal string: IPC's JSON carries no bigint. */
      readonly idSum: string;
      readonly cpuMs: number;
      /** `process.resourceUsage().maxRSS` once the row closed: the process's peak, in KiB. */
      readonly maxRssKiB: number;
      readonly sampled: MemoryPeaks;
    }
  | { readonly kind: "failed"; readonly message: string };

// The highest RSS, V8 heap and Buffer memory seen while a row's timed run goes, sampled on a timer.
// The process's peak RSS (`resourceUsage().maxRSS`) says how much; these say which part grew: the
// JS heap (messages and promises held), `external`/`arrayBuffers` (the Buffers of fetched or read
// bytes), or neither (a client's native queues, librdkafka's).
import { writeHeapSnapshot } from "node:v8";
import type { MemoryPeaks } from "./protocol.js";

/**
 * ROW_HEAP_SNAPSHOT_MB: the first time the JS heap in use passes this many MB, a heap snapshot is
 * written to the working directory (for finding what a row holds; the snapshot's pause and memory
 * spoil that round's figures).
 */
const snapshotAtMB = Number(process.env.ROW_HEAP_SNAPSHOT_MB ?? Number.POSITIVE_INFINITY);

/** Every 50 ms: often enough to catch a read-ahead's high-water mark, too seldom to cost the rate. */
const sampleEveryMs = 50;

export class MemorySampler {
  #snapshotTaken = false;
  #peaks: MemoryPeaks = { rss: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  readonly #timer: NodeJS.Timeout;

  constructor() {
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), sampleEveryMs);
    // The drain's own work keeps the process alive; the sampler must never.
    this.#timer.unref();
  }

  #sample(): void {
    const now = process.memoryUsage();
    if (!this.#snapshotTaken && now.heapUsed / 1e6 > snapshotAtMB) {
      this.#snapshotTaken = true;
      process.stderr.write(`heap snapshot: ${writeHeapSnapshot()}\n`);
    }
    const p = this.#peaks;
    this.#peaks = {
      rss: Math.max(p.rss, now.rss),
      heapUsed: Math.max(p.heapUsed, now.heapUsed),
      external: Math.max(p.external, now.external),
      arrayBuffers: Math.max(p.arrayBuffers, now.arrayBuffers),
    };
  }

  /** Samples once more, stops, and answers the peaks. */
  stop(): MemoryPeaks {
    clearInterval(this.#timer);
    this.#sample();
    return this.#peaks;
  }
}

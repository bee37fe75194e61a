// The highest RSS, V8 heap and Buffer memory seen while a drain runs, sampled on a timer. The
// process's peak RSS (`resourceUsage().maxRSS`) says how much; these say which part grew: the JS
// heap (records and promises held), `external`/`arrayBuffers` (the Buffers of fetched values), or
// neither (the client's native queues, librdkafka's).
import type { MemoryPeaks } from "./protocol.js";

/** Every 50 ms: often enough to catch a read-ahead's high-water mark, too seldom to cost the rate. */
const sampleEveryMs = 50;

export class MemorySampler {
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

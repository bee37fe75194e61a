import type { BacklogCounts, BacklogState } from "@ruststream/core";
import type { BacklogFailure, Tally } from "./tally.js";

/** Every backlog state, in the order the backlog series lists them. */
export const backlogStates: readonly BacklogState[] = [
  "ready",
  "scheduled",
  "leased",
  "dead-lettered",
];

/** One subscriber's backlog as a scrape read it. */
export interface BacklogSample {
  readonly name: string;
  readonly counts: BacklogCounts;
}

/**
 * Asks every subscriber whose broker answers a backlog, all at once, once per scrape: the gauge
 * starts the reading and the failure counter, collected in the same scrape, waits for it, so a
 * failure is counted in the scrape it happened in. Each answer is bounded by `timeoutMs`: a slow
 * or failing broker leaves its subscriber without a sample and is counted, and the scrape goes on.
 */
export class BacklogReading {
  readonly #tally: Tally;
  readonly #timeoutMs: number;
  #current: Promise<readonly BacklogSample[]> = Promise.resolve([]);

  constructor(tally: Tally, timeoutMs: number) {
    this.#tally = tally;
    this.#timeoutMs = timeoutMs;
  }

  /** Starts this scrape's reading. */
  read(): Promise<readonly BacklogSample[]> {
    this.#current = this.#readAll();
    return this.#current;
  }

  /** The last reading, once it ended (the failure counter's wait). */
  async settled(): Promise<void> {
    await this.#current;
  }

  async #readAll(): Promise<readonly BacklogSample[]> {
    const asked: Promise<BacklogSample | undefined>[] = [];
    for (const t of this.#tally.subscribers.values()) {
      const backlog = t.backlog;
      if (backlog !== undefined) asked.push(this.#one(t.name, backlog));
    }
    const samples = await Promise.all(asked);
    return samples.filter((s): s is BacklogSample => s !== undefined);
  }

  async #one(
    name: string,
    backlog: () => Promise<BacklogCounts>,
  ): Promise<BacklogSample | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.#timeoutMs);
    });
    try {
      // A broker's backlog() that throws at once is a failure like one that rejects.
      const answer = await Promise.race([Promise.resolve().then(backlog), late]);
      if (answer === "timeout") return this.#failed(name, "timeout");
      return { name, counts: answer };
    } catch {
      return this.#failed(name, "error");
    } finally {
      clearTimeout(timer);
    }
  }

  #failed(name: string, reason: BacklogFailure): undefined {
    const key = `${name}\u0000${reason}`;
    const failures = this.#tally.backlogFailures;
    const known = failures.get(key);
    if (known === undefined) failures.set(key, { name, reason, count: 1 });
    else known.count++;
    return undefined;
  }
}

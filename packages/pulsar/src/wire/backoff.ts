// Exponential backoff with jitter for reconnects and retried operations: a broker that is restarting
// is not hammered, and clients that lost it together do not come back in lockstep.

export interface BackoffOptions {
  /** The first delay (default 100 ms). */
  readonly initialMs?: number;
  /** The delay never grows past this (default 30 s). */
  readonly maxMs?: number;
}

export class Backoff {
  #attempt = 0;
  readonly #initialMs: number;
  readonly #maxMs: number;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 100;
    this.#maxMs = options.maxMs ?? 30_000;
  }

  /** The next delay: doubling from the initial one up to the maximum, less up to 20 % jitter. */
  next(): number {
    const base = Math.min(this.#maxMs, this.#initialMs * 2 ** Math.min(this.#attempt, 30));
    this.#attempt++;
    return Math.round(base * (1 - Math.random() * 0.2));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (a closing client stops waiting). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

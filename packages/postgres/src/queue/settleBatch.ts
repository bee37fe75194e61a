import type { Held, QueueStore, Settle } from "../client/store.js";

interface Waiting {
  readonly held: Held;
  readonly resolve: (settled: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Settles gathered in one turn of the event loop go as one statement per kind (and delay), so
 * workers settling together cost one round trip, not one each. Each settle answers whether its
 * row's lease still held.
 */
export class SettleBatch {
  readonly #store: QueueStore;
  readonly #settled: () => void;
  readonly #pending = new Map<string, { settle: Settle; waiting: Waiting[] }>();
  #flushing: Promise<void> = Promise.resolve();
  #scheduled = false;

  /** `settled`: called after each statement (a row of a key may be free for the next claim). */
  constructor(store: QueueStore, settled: () => void) {
    this.#store = store;
    this.#settled = settled;
  }

  settle(held: Held, settle: Settle): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const key = JSON.stringify(settle);
      let group = this.#pending.get(key);
      if (group === undefined) {
        group = { settle, waiting: [] };
        this.#pending.set(key, group);
      }
      group.waiting.push({ held, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#flushing = this.#flush();
        });
      }
    });
  }

  /** Waits for the statements under way. */
  async drain(): Promise<void> {
    await this.#flushing;
  }

  async #flush(): Promise<void> {
    const groups = [...this.#pending.values()];
    this.#pending.clear();
    await Promise.all(
      groups.map(async ({ settle, waiting }) => {
        try {
          const settled = await this.#store.settle(
            waiting.map((w) => w.held),
            settle,
          );
          for (const w of waiting) w.resolve(settled.has(w.held.id));
        } catch (error) {
          for (const w of waiting) w.reject(error);
        }
      }),
    );
    this.#settled();
  }
}

/**
 * Changes gathered until the files have been quiet for `debounceMs` (an editor's save is several
 * events; a `git checkout` is many), then handed over together.
 */
export class ChangeQueue {
  readonly #debounceMs: number;
  #pending = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #settled = false;
  #waiter: ((paths: string[]) => void) | undefined;

  constructor(debounceMs: number) {
    this.#debounceMs = debounceMs;
  }

  note(path: string): void {
    this.#pending.add(path);
    this.#settled = false;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#settled = true;
      this.#deliver();
    }, this.#debounceMs);
  }

  /** Forgets what changed so far: a service started now loads it already. */
  clear(): void {
    clearTimeout(this.#timer);
    this.#pending = new Set();
    this.#settled = false;
  }

  /** Resolves with the changed paths once a change has settled. */
  next(): Promise<string[]> {
    return new Promise((resolve) => {
      this.#waiter = resolve;
      this.#deliver();
    });
  }

  close(): void {
    clearTimeout(this.#timer);
  }

  #deliver(): void {
    if (!this.#settled || this.#waiter === undefined) return;
    const paths = [...this.#pending];
    const waiter = this.#waiter;
    this.#waiter = undefined;
    this.#pending = new Set();
    this.#settled = false;
    waiter(paths);
  }
}

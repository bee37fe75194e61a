import { type RunningApp, RustStreamError } from "@ruststream/core";

/**
 * The RustStream app a transport strategy or a client runs: started once, running, stopped. A
 * close while it still starts waits for the start and stops what it started, so nothing is left
 * running; a start that fails is forgotten, so the next one tries again.
 */
export class AppSlot {
  #starting: Promise<RunningApp> | undefined;
  #running: RunningApp | undefined;
  /** Why `unwrap()` has no app yet, naming what to call first. */
  readonly #notRunning: string;

  constructor(notRunning: string) {
    this.#notRunning = notRunning;
  }

  /** The app `start` starts, or the one already starting or running. */
  start(start: () => Promise<RunningApp>): Promise<RunningApp> {
    if (this.#starting !== undefined) return this.#starting;
    const starting = start().then(
      (running) => {
        // Not if a close came first: the close stops it, and unwrap() must not hand it out.
        if (this.#starting === starting) this.#running = running;
        return running;
      },
      (error: unknown) => {
        if (this.#starting === starting) this.#starting = undefined;
        throw error;
      },
    );
    this.#starting = starting;
    return starting;
  }

  /** Stops the app, once it has started; nothing when none was started. */
  async close(): Promise<void> {
    const starting = this.#starting;
    this.#starting = undefined;
    this.#running = undefined;
    if (starting === undefined) return;
    const running = await starting.catch(() => undefined);
    await running?.stop();
  }

  /** The running app, or an `invalid-argument` error saying what to call first. */
  unwrap<T>(): T {
    if (this.#running === undefined)
      throw new RustStreamError("invalid-argument", this.#notRunning);
    return this.#running as T;
  }
}

/**
 * How long the sender waits after one wake-up statement before the next: the queues published or
 * settled to meanwhile share that next one.
 */
export const wakeGapMs = 5;

/**
 * The wake-ups of publishes made outside a caller's transaction, of settles that give rows back to
 * a queue outside a transactional handler's claim (a delayed retry, a release, a move to the dead
 * letter) and of redrives, sent after their statements committed and coalesced: one statement at
 * a time, naming every queue woken since the last, then a pause of `wakeGapMs`. PostgreSQL
 * commits a database's notifying transactions one after another, so a `pg_notify` in each
 * publish's own INSERT (or each settle's or redrive's UPDATE) made concurrent ones wait for each
 * other's commits; the statement alone does not. A wake-up that fails is the subscriptions'
 * poll's, as one lost with the listening connection is.
 */
export class WakeSender {
  readonly #send: (queues: readonly string[]) => Promise<unknown>;
  readonly #pending = new Set<string>();
  #running: Promise<void> | undefined;
  #closing = false;
  #endGap: (() => void) | undefined;

  /** `send` notifies every queue it is given, in one statement. */
  constructor(send: (queues: readonly string[]) => Promise<unknown>) {
    this.#send = send;
  }

  /** Wakes the subscriptions of `queues`, whose rows committed: now, or after the current pause. */
  wake(queues: Iterable<string>): void {
    for (const queue of queues) this.#pending.add(queue);
    if (this.#pending.size > 0 && this.#running === undefined) this.#running = this.#run();
  }

  /** Sends what is pending at once, without the pause, and waits for it. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#endGap?.();
    await this.#running;
  }

  async #run(): Promise<void> {
    while (this.#pending.size > 0) {
      const queues = [...this.#pending];
      this.#pending.clear();
      try {
        await this.#send(queues);
      } catch {
        // Lost: the subscriptions' poll finds the rows (a send on a closed pool fails at once).
      }
      if (!this.#closing) await this.#gap();
    }
    this.#running = undefined;
  }

  #gap(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#endGap = undefined;
        resolve();
      }, wakeGapMs);
      this.#endGap = () => {
        clearTimeout(timer);
        this.#endGap = undefined;
        resolve();
      };
    });
  }
}

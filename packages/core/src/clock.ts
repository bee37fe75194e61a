/** A timer a {@link Clock} armed; cancelling a fired or cancelled timer does nothing. */
export interface ClockTimer {
  cancel(): void;
  /**
   * Lets the process exit while this timer is all that is left to wait for (a real timer's
   * `unref`): for work that repeats until stopped. A {@link ManualClock}'s timers hold nothing.
   */
  unref?(): void;
}

/**
 * Where core and the brokers get time from. Tests hand a {@link ManualClock} to the broker and the
 * runtime, so retries after a delay and timeouts happen when the test says, not after real sleeps.
 */
export interface Clock {
  /** Milliseconds since an arbitrary origin; only differences mean anything. */
  now(): number;
  /** Runs `callback` once, `ms` milliseconds from now. */
  setTimer(ms: number, callback: () => void): ClockTimer;
}

/** Real time. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(ms, callback) {
    const handle = setTimeout(callback, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle), unref: () => handle.unref() };
  },
};

interface ManualTimer {
  readonly due: number;
  readonly order: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/** Time that moves only when {@link ManualClock.advance} is called. */
export class ManualClock implements Clock {
  #now: number;
  #order = 0;
  #timers: ManualTimer[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, callback: () => void): ClockTimer {
    const timer: ManualTimer = {
      due: this.#now + Math.max(0, ms),
      order: this.#order++,
      callback,
      cancelled: false,
    };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Timers armed and not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /**
   * Moves time forward, firing due timers in due order (ties in arming order). A timer armed by a
   * callback fires in the same call when it falls due within the step.
   */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const next = this.#nextDue(until);
      if (next === undefined) break;
      this.#timers.splice(this.#timers.indexOf(next), 1);
      this.#now = next.due;
      next.callback();
    }
    this.#now = until;
    this.#timers = this.#timers.filter((t) => !t.cancelled);
  }

  #nextDue(until: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.#timers) {
      if (t.cancelled || t.due > until) continue;
      if (best === undefined || t.due < best.due || (t.due === best.due && t.order < best.order)) {
        best = t;
      }
    }
    return best;
  }
}

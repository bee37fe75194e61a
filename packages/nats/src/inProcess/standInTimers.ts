import type { Clock, ClockTimer } from "@ruststream/core";

/** A timer the stand-in keeps: when it falls due (clock ms), and its clock timer while armed. */
interface KeptTimer {
  readonly due: number;
  readonly callback: () => void;
  armed: ClockTimer | undefined;
}

/**
 * The clock every timer of the stand-in runs on (a message's TTL, a schedule, a consumer's ack wait
 * and delayed `nak`): its timers run while a connection to the stand-in is open. When the last one
 * closes they stop, kept with their due time, so a closed stand-in neither delivers nor holds a test
 * runner's process; the next connection arms them again (one fallen due meanwhile fires once, at
 * once). On a real clock each is unref'd: what a program waits for, its own work holds (a test's
 * runner), so a long TTL or a repeating schedule never keeps a finished process alive.
 */
export class StandInTimers implements Clock {
  readonly #clock: Clock;
  readonly #kept = new Set<KeptTimer>();
  #openLinks = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  now(): number {
    return this.#clock.now();
  }

  setTimer(ms: number, callback: () => void): ClockTimer {
    const timer: KeptTimer = {
      due: this.#clock.now() + Math.max(0, ms),
      callback,
      armed: undefined,
    };
    this.#kept.add(timer);
    if (this.#openLinks > 0) this.#arm(timer);
    return {
      cancel: () => {
        timer.armed?.cancel();
        timer.armed = undefined;
        this.#kept.delete(timer);
      },
    };
  }

  /** A connection opened: the first since the last closed arms every kept timer. */
  opened(): void {
    if (this.#openLinks++ === 0) for (const timer of this.#kept) this.#arm(timer);
  }

  /** A connection closed: with the last, every timer stops and is kept. */
  closed(): void {
    if (--this.#openLinks > 0) return;
    for (const timer of this.#kept) {
      timer.armed?.cancel();
      timer.armed = undefined;
    }
  }

  #arm(timer: KeptTimer): void {
    timer.armed = this.#clock.setTimer(timer.due - this.#clock.now(), () => {
      timer.armed = undefined;
      this.#kept.delete(timer);
      timer.callback();
    });
    timer.armed.unref?.();
  }
}

/** What a row's milliseconds are counted in. */
export type ClockName = "wall" | "cpu";

export interface BenchClock {
  readonly name: ClockName;
  /** Milliseconds on this clock; only differences mean anything. */
  readonly now: () => number;
}

/**
 * `wall` (the default) is `performance.now()`. `cpu` is the process's CPU time, user and system, GC
 * threads included: on a shared machine wall time measures the neighbours as much as the row.
 */
export function benchClock(name: string | undefined): BenchClock {
  if (name === undefined || name === "wall") return { name: "wall", now: () => performance.now() };
  if (name === "cpu") {
    return {
      name: "cpu",
      now: () => {
        const used = process.cpuUsage();
        return (used.user + used.system) / 1000;
      },
    };
  }
  throw new Error(`the clock is wall or cpu, not ${name}`);
}

// A small seeded generator (mulberry32): the same seed gives the same fault schedule on every
// machine, so a failing run is replayed with `--seed`. Not for anything secret.

/** A seeded source of numbers in [0, 1). */
export interface Random {
  /** The next number in [0, 1). */
  next(): number;
  /** A whole number in [min, max], both included. */
  int(min: number, max: number): number;
  /** One of `items`. */
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[int(0, items.length - 1)] as T;
    },
  };
}

/**
 * The seed of one scenario in a run: the run's seed mixed with the scenario's name, so adding a
 * scenario does not change the schedule of the others, and `--scenario x --seed s` replays exactly
 * what scenario x did in the whole run with seed s.
 */
export function scenarioSeed(runSeed: number, scenario: string): number {
  let hash = runSeed >>> 0;
  for (const char of scenario) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return hash;
}

// The seeded fault schedule of one scenario: when each fault lands, which kind, on what, for how long.
import type { Random } from "../random.js";

export interface PlannedFault<K extends string> {
  readonly kind: K;
  /** When to inject it, ms after the scenario started. */
  readonly atMs: number;
  /** How long it lasts before it is healed. */
  readonly durationMs: number;
  /** Which replica it hits, for faults on a service process. */
  readonly replica: number;
}

export interface ScheduleOptions<K extends string> {
  readonly kinds: readonly K[];
  readonly count: number;
  /** The faults land in [0, windowMs). */
  readonly windowMs: number;
  readonly minDurationMs: number;
  readonly maxDurationMs: number;
  readonly replicas: number;
}

/**
 * One fault per equal slot of the window, at a random moment in the slot's first half and lasting
 * at most the rest of it, so faults never overlap and one heals before the next lands: each
 * recovery time is then the recovery from one fault.
 */
export function faultSchedule<K extends string>(
  random: Random,
  options: ScheduleOptions<K>,
): PlannedFault<K>[] {
  const { count, windowMs, minDurationMs, maxDurationMs } = options;
  if (count < 1) return [];
  const slot = windowMs / count;
  if (slot < 2 * minDurationMs) {
    throw new Error(
      `${count} faults of at least ${minDurationMs} ms do not fit in ${windowMs} ms: give fewer faults or a longer window`,
    );
  }
  const faults: PlannedFault<K>[] = [];
  for (let i = 0; i < count; i++) {
    const start = Math.round(i * slot + random.next() * (slot / 2));
    const room = Math.round((i + 1) * slot) - start;
    const longest = Math.max(minDurationMs, Math.min(maxDurationMs, room - minDurationMs));
    faults.push({
      kind: random.pick(options.kinds),
      atMs: start,
      durationMs: random.int(minDurationMs, longest),
      replica: random.int(0, options.replicas - 1),
    });
  }
  return faults;
}

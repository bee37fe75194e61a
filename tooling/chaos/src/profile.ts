// How much load and how many faults a run puts on each scenario.

export interface Profile {
  readonly name: "ci" | "long";
  readonly messages: number;
  /** Distinct keys the messages spread over (order is checked per key). */
  readonly keys: number;
  /** The load is published, and the faults land, within this window. */
  readonly windowMs: number;
  readonly faults: number;
  readonly minFaultMs: number;
  readonly maxFaultMs: number;
  /** How long after the window every message may take to be handled before the rest count as lost. */
  readonly drainTimeoutMs: number;
  /** Work per message in the service, so faults land with messages under way. */
  readonly workMs: number;
}

export const profiles: Readonly<Record<Profile["name"], Profile>> = {
  // Sized so the whole profile stays well under 8 minutes on a 2-core machine.
  ci: {
    name: "ci",
    messages: 10_000,
    keys: 32,
    windowMs: 20_000,
    faults: 5,
    minFaultMs: 300,
    maxFaultMs: 1_500,
    drainTimeoutMs: 60_000,
    workMs: 1,
  },
  long: {
    name: "long",
    messages: 100_000,
    keys: 64,
    windowMs: 240_000,
    faults: 40,
    minFaultMs: 300,
    maxFaultMs: 3_000,
    drainTimeoutMs: 180_000,
    workMs: 1,
  },
};

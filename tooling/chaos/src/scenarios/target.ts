// The broker side of a scenario: where the service connects, how the load is published, and the
// broker's own fault where it has one.
import type { Handled, Published } from "../checker.js";
import type { PlannedFault } from "../faults/schedule.js";
import type { FaultKind } from "./scenario.js";

export interface Target {
  /** What the service connects to: a file path, a Redis URL (through the fault proxy if any). */
  readonly serviceAddress: string;
  /** The load goes out whole before the services start (a single-writer file), else during the window. */
  readonly publishBeforeStart: boolean;
  /** Publishes every message, paced over `windowMs` where the target publishes during the window. */
  publishAll(
    messages: readonly Published[],
    windowMs: number,
    log: (line: string) => void,
  ): Promise<void>;
  /** Restarts the broker hard (SIGKILL, start again), where the scenario may. */
  readonly restartBroker: (() => Promise<void>) | undefined;
  /**
   * The broker's own faults beyond a restart (a cluster node killed), by kind: each injects its
   * fault, holds it with `hold`, heals it, and answers what it hit and when (`performance.now()`)
   * the blow landed, which may come after a look at the cluster.
   */
  readonly brokerFaults?: Readonly<
    Partial<
      Record<
        FaultKind,
        (
          fault: PlannedFault<FaultKind>,
          hold: () => Promise<void>,
        ) => Promise<{ target: string; landedAt: number }>
      >
    >
  >;
  /**
   * What the service produced, where its mode promises its outputs exactly once (Kafka
   * `transactional`): read back once `expected` distinct ones were seen or `timeoutMs` ran out.
   */
  readonly outputs?: (expected: number, timeoutMs: number) => Promise<readonly Handled[]>;
  cleanup(): Promise<void>;
}

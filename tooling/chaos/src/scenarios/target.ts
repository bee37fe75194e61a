// The broker side of a scenario: where the service connects, how the load is published, and the
// broker's own fault where it has one.
import type { Published } from "../checker.js";
import type { PlannedFault } from "../faults/schedule.js";
import type { Replicas } from "../service/replicas.js";
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
  cleanup(): Promise<void>;
  /**
   * A fault the target injects and heals itself (a full disk, a truncated file): resolves once
   * healed, with what it hit.
   */
  readonly injectOwn?: (fault: PlannedFault<FaultKind>, replicas: Replicas) => Promise<string>;
  /** Called before the replicas are stopped: ends whatever the target runs beside them. */
  readonly beforeStop?: () => Promise<void>;
  /** Messages a fault took out of the broker (truncated away): gone, not lost by the framework. */
  readonly removedByFault?: () => ReadonlySet<number>;
  /** The target's own verdict once the replicas stopped: failures, and notes for the report. */
  readonly verdict?: () => { failures: string[]; notes: string[] };
}

// The broker side of a scenario: where the service connects, how the load is published, and the
// broker's own fault where it has one.
import type { Handled, Published } from "../checker.js";
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
  /**
   * The target's own faults, by kind (a cluster node killed, the disk filled, the file cut): each
   * injects its fault, holds it, heals it where it heals, and answers what it hit and, where the
   * blow lands only after a look at the broker, when it landed (`performance.now()`).
   */
  readonly ownFaults?: Readonly<Partial<Record<FaultKind, OwnFault>>>;
  /**
   * What the service produced, where its mode promises its outputs exactly once (Kafka
   * `transactional`): read back once `expected` distinct ones were seen or `timeoutMs` ran out.
   */
  readonly outputs?: (expected: number, timeoutMs: number) => Promise<readonly Handled[]>;
  /**
   * Around every fault: `beforeFault` before it lands, `afterFault` once it healed (a core NATS
   * load marks what it publishes from one to the other as exposed to the fault: to the replica it
   * kills, or, under a fan-out, to every replica behind the proxy).
   */
  readonly beforeFault?: (fault: PlannedFault<FaultKind>) => Promise<void>;
  readonly afterFault?: () => Promise<void>;
  cleanup(): Promise<void>;
  /** Called before the replicas are stopped: ends whatever the target runs beside them. */
  readonly beforeStop?: () => Promise<void>;
  /**
   * Messages a fault took out of the broker (truncated away): gone, not lost by the framework.
   * Under a fan-out (`Scenario.fanOut`) the runner asks per replica: what that replica lost to a
   * fault.
   */
  readonly removedByFault?: (replica?: number) => ReadonlySet<number>;
  /**
   * The target's own verdict once the replicas stopped: failures, and notes for the report (read
   * from the broker where it must be, as a transactional queue's business rows are).
   */
  readonly verdict?: () => Verdict | Promise<Verdict>;
}

export interface Verdict {
  readonly failures: string[];
  readonly notes: string[];
}

/** One of a target's own faults: `hold` waits out the fault's planned duration. */
export type OwnFault = (
  fault: PlannedFault<FaultKind>,
  on: { readonly hold: () => Promise<void>; readonly replicas: Replicas },
) => Promise<{ readonly target: string; readonly landedAt?: number }>;

// The broker side of a scenario: where the service connects, how the load is published, and the
// broker's own fault where it has one.
import type { Published } from "../checker.js";

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
}

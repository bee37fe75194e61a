// Which stream-file target a scenario gets: its faults decide (a full disk needs the file on a
// small filesystem of its own and the load written under the fault; a truncation needs the file
// watched for what it still holds).
import type { Handled, Published } from "../checker.js";
import { fileDiskFullTarget } from "./fileDiskFullTarget.js";
import { fileTarget } from "./fileTarget.js";
import { fileTruncateTarget } from "./fileTruncateTarget.js";
import type { Scenario } from "./scenario.js";
import type { Target } from "./target.js";

export async function fileTargetOf(
  scenario: Scenario,
  key: string,
  seed: number,
  messages: readonly Published[],
  logFile: string,
  /** What the service handled so far, as the run goes: a truncation compares what it cut with it. */
  handled: readonly Handled[],
  /** How many truncations the run's schedule holds. */
  plannedCuts: number,
): Promise<Target> {
  if (scenario.faults.includes("disk-full")) {
    return fileDiskFullTarget(key, messages.length, logFile, scenario.retry !== undefined);
  }
  if (scenario.faults.includes("truncate")) {
    return fileTruncateTarget(
      key,
      seed,
      new Set(messages.map((m) => m.seq)),
      logFile,
      handled,
      plannedCuts,
    );
  }
  return fileTarget(key);
}

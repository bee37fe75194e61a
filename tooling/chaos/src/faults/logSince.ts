// How many lines of a replica log say something in a replica log from now on: the log of a scenario and seed is
// appended to by every run of it, so a count must start where this run's lines do.
import { existsSync, readFileSync, statSync } from "node:fs";

/** Counts the lines holding every one of `texts` among those `logFile` gains after this call. */
export function logCounter(logFile: string): (...texts: string[]) => number {
  const from = existsSync(logFile) ? statSync(logFile).size : 0;
  return (...texts) => {
    if (!existsSync(logFile)) return 0;
    const lines = readFileSync(logFile).subarray(from).toString("utf8").split("\n");
    return lines.filter((line) => texts.every((text) => line.includes(text))).length;
  };
}

// The peak resident set of a long-lived process over one row (the Java worker, which serves every
// Java row of a run): Linux keeps a process's high-water mark (VmHWM) and resets it to the current
// resident set when "5" is written to its clear_refs, so the mark read after a row is that row's.

import { readFileSync, writeFileSync } from "node:fs";

/** Starts a row's span: the process's high-water mark falls to what it holds now. */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** The process's high-water mark since the last reset, in KiB. */
export function peakSinceReset(pid: number): number {
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (kib === undefined) throw new Error(`no VmHWM for process ${pid}`);
  return Number(kib);
}

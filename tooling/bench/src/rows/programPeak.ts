// The peak resident set of a program that is not Node (a Rust benchmark binary), run once: GNU time
// (`/usr/bin/time -f %M`) writes it to a file of its own when the program exits, so the program's
// output stays as it was.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** How to start `program` so its peak is recorded, and where to read it once it exited. */
export interface PeakRecorded {
  readonly command: string;
  readonly args: readonly string[];
  /** The program's peak resident set in KiB: call once it exited; removes the record. */
  peakKiB(): number;
}

export function recordingPeak(program: string, args: readonly string[]): PeakRecorded {
  const dir = mkdtempSync(join(tmpdir(), "bench-peak-"));
  const file = join(dir, "maxrss");
  return {
    command: "/usr/bin/time",
    args: ["-f", "%M", "-o", file, program, ...args],
    peakKiB() {
      const kib = Number(readFileSync(file, "utf8").trim().split("\n").at(-1));
      rmSync(dir, { recursive: true, force: true });
      if (!Number.isFinite(kib)) throw new Error(`no peak recorded for ${program}`);
      return kib;
    },
  };
}

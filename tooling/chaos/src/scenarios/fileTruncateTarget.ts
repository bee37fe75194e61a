// A stream file cut short under its live reader at the seeded moments, at a seeded point (anywhere
// in the newest part of the file, rarely on a frame boundary). The load is written whole before
// the service starts (as for file-kill): the cut is made by something other than the file's
// writer, and no writer is there to go on.
//
// The rule the checker holds the framework to:
// - what the cut took away is gone from the broker: a message no longer in the file after a cut
//   and never handled before it is "removed by the fault", not lost; every message still in the
//   file must be handled (so a reader that wedged or skipped shows as a loss);
// - nothing else: no message handled that was never published (a reader that read garbage at a
//   cut), order per key kept for what is handled;
// - a reader that had read past the cut stops loudly: the service exits naming the truncation
//   (FILE_TRUNCATED, "truncated under this reader"), as a supervisor sees it, and is started
//   again here, as a supervisor would; a service that exits without saying so fails the scenario.
import { statSync, truncateSync } from "node:fs";
import type { Handled } from "../checker.js";
import { fileContents } from "../faults/fileContents.js";
import { logCounter } from "../faults/logSince.js";
import { type Random, scenarioSeed, seededRandom } from "../random.js";
import type { Replicas } from "../service/replicas.js";
import { fileTarget } from "./fileTarget.js";
import type { Target } from "./target.js";

/** The stream file's 128-byte header, which no cut reaches. */
const HEADER = 128;
/** What the service logs when its reader stops at a cut (the file package's FILE_TRUNCATED). */
const LOUD = "truncated under this reader";
/** The runtime's line as it stops the app: one per exit. */
const STOPPING = "fail-fast: stopping the app";
/**
 * A cut that lands while the service starts (it reads the file's end to resume) fails the startup
 * with the file's own FILE_TRUNCATED, worded for a torn tail: loud too, and the next start goes on.
 */
const STARTUP = "startup failed";
const CUT_SHORT = "is cut short here";

/**
 * A cut in the newest 40 % of the file when a run plans five cuts (the CI profile), a smaller share
 * when it plans more: the long profile's forty would otherwise take all but a handful of the load
 * (99,997 of 100,000 in one run), leaving nothing to read. So any run's cuts together take about
 * what five take, and most of the load stays to be read.
 */
function cutPoint(random: Random, size: number, plannedCuts: number): number {
  const share = 0.4 * Math.min(1, 5 / Math.max(1, plannedCuts));
  const keep = 1 - share + share * random.next();
  return Math.max(HEADER, Math.floor(size * keep));
}

export async function fileTruncateTarget(
  key: string,
  seed: number,
  published: ReadonlySet<number>,
  logFile: string,
  handled: readonly Handled[],
  /** How many cuts the run's schedule holds: the share each cut takes shrinks with it. */
  plannedCuts: number,
): Promise<Target> {
  const base = await fileTarget(key);
  const inLog = logCounter(logFile);
  const path = base.serviceAddress;
  const random = seededRandom(scenarioSeed(seed, "truncate"));
  const removed = new Set<number>();
  const cuts: string[] = [];
  /** Cuts that took a message the service had handled: its reader had read past them. */
  let cutsBehindReader = 0;
  const exits: number[] = [];
  let supervised: Replicas | undefined;
  let supervising: Promise<void> | undefined;
  let stopping = false;

  // A supervisor: a replica that exited on its own is started again after a moment.
  const supervise = async (replicas: Replicas): Promise<void> => {
    while (!stopping) {
      for (let i = 0; i < replicas.count; i++) {
        if (!replicas.isRunning(i) && !stopping) {
          exits.push(performance.now());
          await new Promise((resolve) => setTimeout(resolve, 200));
          // One that exits again before it is ready is seen on the next round, and counted again.
          await replicas.start(i).catch(() => {});
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  return {
    ...base,
    ownFaults: {
      truncate: async (_fault, { hold, replicas }) => {
        if (supervised === undefined) {
          supervised = replicas;
          supervising = supervise(replicas);
        }
        const size = statSync(path).size;
        const cut = cutPoint(random, size, plannedCuts);
        truncateSync(path, cut);
        // What is left decides what the cut removed: the load's messages no longer in the file.
        const left = fileContents(path, key).seqs;
        if (handled.some((h) => !left.has(h.seq))) cutsBehindReader++;
        let now = 0;
        for (const seq of published) {
          if (!left.has(seq) && !removed.has(seq)) {
            removed.add(seq);
            now++;
          }
        }
        cuts.push(`${size} -> ${cut} bytes (${now} messages removed)`);
        await hold();
        return { target: `file cut to ${cut} bytes` };
      },
    },
    async beforeStop() {
      // A reader notices a cut when it next reaches the end of what it read: give it a moment.
      const deadline = performance.now() + 5_000;
      while (cutsBehindReader > 0 && exits.length === 0 && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      stopping = true;
      await supervising;
    },
    removedByFault: () => removed,
    verdict() {
      const loud = inLog(STOPPING, LOUD) + inLog(STARTUP, CUT_SHORT);
      const failures: string[] = [];
      if (cutsBehindReader > 0 && exits.length === 0) {
        failures.push(
          `${cutsBehindReader} cuts took messages the service had handled (its reader had read past them), and it never stopped: it read on, or waited, as if nothing happened`,
        );
      }
      // Each exit must be a reader stopping at a cut, and say so as it stops the app.
      if (exits.length > loud) {
        failures.push(
          `the service exited ${exits.length} times, and stopped naming a truncation only ${loud} times: an exit that did not say why`,
        );
      }
      return {
        failures,
        notes: [
          `cuts: ${cuts.join("; ")}; behind the reader (taking messages already handled): ${cutsBehindReader}`,
          `messages cut away: ${removed.size} (those never handled before their cut are not counted lost)`,
          `service exits, each started again: ${exits.length}, of them stopped naming the truncation: ${loud}`,
        ],
      };
    },
  };
}

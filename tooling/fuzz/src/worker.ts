import { parentPort, workerData } from "node:worker_threads";
import { emptyTally, generated, runInput, type Tally } from "./run.js";
import { targets } from "./targets/index.js";

// One target's share of a long run, in a worker thread the runner watches (long.ts): the number of
// the input it is on goes in `progress` before each decode, so an input that never returns is
// named by the runner, which ends the worker and starts another after it.

export interface WorkerJob {
  readonly target: string;
  readonly seed: number;
  /** The first generated input to run; the corpus runs first when it is 0. */
  readonly from: number;
  readonly to: number;
  /** Inputs not to run again, one a worker never came back from (a corpus entry's as in `progress`). */
  readonly skip: readonly number[];
  /** `[0]`: the input being decoded (a corpus entry's as -1 - its place). */
  readonly progress: SharedArrayBuffer;
}

export type WorkerMessage =
  /** What the inputs from the job's `from` up to `next` did. */
  { readonly kind: "tally"; readonly tally: Tally; readonly next: number; readonly done: boolean };

/** A snapshot of the tally this often, so a worker ended on a hang loses little. */
const SNAPSHOT_EVERY = 10_000;
/**
 * The event loop turns this often. Node frees what a synchronous zlib call held only once the loop
 * turns; a loop that never yields grew to 5 GiB resident over a million ZLIB inputs, where a
 * service, which yields between socket reads, holds nothing of the kind.
 */
const YIELD_EVERY = 1_000;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const job = workerData as WorkerJob;
const target = targets.find((t) => t.name === job.target);
if (target === undefined) throw new Error(`no fuzz target "${job.target}"`);
const progress = new Int32Array(job.progress);
const skip = new Set(job.skip);
const tally = emptyTally(target, job.seed);
const started = performance.now();

function post(next: number, done: boolean): void {
  tally.elapsedMs = performance.now() - started;
  tally.peakRss = Math.max(tally.peakRss, process.memoryUsage.rss());
  const message: WorkerMessage = { kind: "tally", tally, next, done };
  parentPort!.postMessage(message);
}

if (job.from === 0) {
  for (const [i, { name, input }] of target.corpus().entries()) {
    if (skip.has(-1 - i)) continue;
    Atomics.store(progress, 0, -1 - i);
    runInput(target, input, `corpus:${name}`, tally);
  }
}
for (const { index, input } of generated(target, job.seed, job.from, job.to)) {
  if (skip.has(index)) continue;
  Atomics.store(progress, 0, index);
  runInput(target, input, String(index), tally);
  if ((index + 1) % SNAPSHOT_EVERY === 0) post(index + 1, false);
  if ((index + 1) % YIELD_EVERY === 0) await turn();
}
post(job.to, true);

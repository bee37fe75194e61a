import { Worker } from "node:worker_threads";
import { emptyTally, type Tally } from "./run.js";
import type { FuzzTarget } from "./target.js";
import type { WorkerJob, WorkerMessage } from "./worker.js";

/** An input the worker has been on this long has hung: the worker is ended and the run goes on. */
const HUNG_AFTER_MS = 120_000;
const KEPT_FINDINGS = 20;

function merge(into: Tally, from: Tally): void {
  into.inputs += from.inputs;
  into.bytes += from.bytes;
  for (const k of Object.keys(into.outcomes) as (keyof Tally["outcomes"])[])
    into.outcomes[k] += from.outcomes[k];
  for (const k of Object.keys(into.found) as (keyof Tally["found"])[])
    into.found[k] += from.found[k];
  into.findings.push(...from.findings.slice(0, Math.max(0, KEPT_FINDINGS - into.findings.length)));
  into.peakDecodeBytes = Math.max(into.peakDecodeBytes, from.peakDecodeBytes);
  into.peakRss = Math.max(into.peakRss, from.peakRss);
  if (from.slowestMs > into.slowestMs) {
    into.slowestMs = from.slowestMs;
    into.slowestInput = from.slowestInput;
  }
  into.worstMicrosPerByte = Math.max(into.worstMicrosPerByte, from.worstMicrosPerByte);
  into.retimed += from.retimed;
  into.elapsedMs += from.elapsedMs;
}

type Ended =
  | { readonly kind: "done"; readonly tally: Tally }
  /** The worker was ended on input `at`; `last` is its latest snapshot, if it sent one. */
  | {
      readonly kind: "hung";
      readonly at: number;
      readonly last: { tally: Tally; next: number } | undefined;
    };

function watch(
  job: Omit<WorkerJob, "progress">,
  onProgress: (next: number) => void,
): Promise<Ended> {
  const progress = new SharedArrayBuffer(4);
  const position = new Int32Array(progress);
  const worker = new Worker(new URL("./worker.ts", import.meta.url), {
    workerData: { ...job, progress } satisfies WorkerJob,
  });
  let last: { tally: Tally; next: number } | undefined;
  return new Promise((resolve, reject) => {
    let seen = Atomics.load(position, 0);
    let since = Date.now();
    const timer = setInterval(() => {
      const now = Atomics.load(position, 0);
      if (now !== seen) {
        seen = now;
        since = Date.now();
      } else if (Date.now() - since > HUNG_AFTER_MS) {
        clearInterval(timer);
        void worker.terminate();
        resolve({ kind: "hung", at: now, last });
      }
    }, 1000);
    worker.on("message", (message: WorkerMessage) => {
      if (message.done) {
        clearInterval(timer);
        resolve({ kind: "done", tally: message.tally });
      } else {
        last = { tally: message.tally, next: message.next };
        onProgress(message.next);
      }
    });
    worker.on("error", (error) => {
      clearInterval(timer);
      reject(error);
    });
  });
}

/**
 * The target's corpus and `count` generated inputs in worker threads, one at a time: an input that
 * never returns is a hang finding, and the run goes on after it in a new worker.
 */
export async function runLong(
  target: FuzzTarget,
  seed: number,
  count: number,
  onProgress: (next: number) => void = () => {},
): Promise<Tally> {
  const total = emptyTally(target, seed);
  const skip: number[] = [];
  let from = 0;
  for (;;) {
    const ended = await watch({ target: target.name, seed, from, to: count, skip }, onProgress);
    if (ended.kind === "done") {
      merge(total, ended.tally);
      return total;
    }
    if (ended.last !== undefined) {
      merge(total, ended.last.tally);
      from = ended.last.next;
    }
    skip.push(ended.at);
    const name = ended.at < 0 ? `corpus:${target.corpus()[-1 - ended.at]?.name}` : String(ended.at);
    total.found.hang++;
    total.inputs++;
    if (total.findings.length < KEPT_FINDINGS) {
      total.findings.push({
        kind: "hang",
        input: name,
        detail: `never returned in ${HUNG_AFTER_MS / 1000} s`,
        bytes: "",
      });
    }
  }
}

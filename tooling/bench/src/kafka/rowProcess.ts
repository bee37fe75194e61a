// main.ts's side of a row's process: fork rowChild.ts for one row and round, wait for its answer.
import { fork } from "node:child_process";
import type { MemoryPeaks, RowJob, RowReply } from "./protocol.js";
import type { Drained } from "./tally.js";

/** A row's drain as measured in its own process, with that process's memory peaks. */
export interface DrainedApart extends Drained {
  /** The row's process's peak resident set (`resourceUsage().maxRSS`), in KiB. */
  readonly maxRssKiB: number;
  readonly sampled: MemoryPeaks;
}

/** Runs `job` in a fresh process with the loader flags (tsx) this one runs under. */
export function runApart(job: RowJob): Promise<DrainedApart> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL("./rowChild.ts", import.meta.url), [JSON.stringify(job)], {
      // A --cpu-prof or --heap-prof of the bench is not the row's; ROW_NODE_OPTIONS asks for one there.
      execArgv: [
        ...process.execArgv.filter((flag) => !/^--(cpu|heap)-prof/.test(flag)),
        ...(process.env.ROW_NODE_OPTIONS?.split(" ").filter((flag) => flag !== "") ?? []),
      ],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let answer: RowReply | undefined;
    child.on("message", (message: RowReply) => {
      answer = message;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (answer?.kind === "drained") {
        const { kind: _, idSum, ...rest } = answer;
        resolve({ ...rest, idSum: BigInt(idSum) });
      } else if (answer?.kind === "failed") {
        reject(new Error(`row ${job.key}: ${answer.message}`));
      } else {
        reject(new Error(`row ${job.key}: its process exited (${code}) without an answer`));
      }
    });
  });
}

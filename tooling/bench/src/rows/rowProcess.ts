// A bench's side of a row's process: fork rowChild.ts for one row and round, wait for its answer.
import { fork } from "node:child_process";
import type { RowJob, RowMemory, RowReply } from "./protocol.js";

/** What a row measured in its own process, with that process's memory. */
export interface Apart<Measured> {
  readonly measured: Measured;
  readonly memory: RowMemory;
}

/**
 * Runs `job` in a fresh process with the loader flags (tsx) this one runs under. `Measured` is what
 * the job's row module answers; IPC's structured clone ("advanced" serialization) keeps its bigints.
 */
export function runApart<Measured>(job: RowJob): Promise<Apart<Measured>> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL("./rowChild.ts", import.meta.url), [JSON.stringify(job)], {
      // A --cpu-prof or --heap-prof of the bench is not the row's; ROW_NODE_OPTIONS asks for one there.
      execArgv: [
        ...process.execArgv.filter((flag) => !/^--(cpu|heap)-prof/.test(flag)),
        ...(process.env.ROW_NODE_OPTIONS?.split(" ").filter((flag) => flag !== "") ?? []),
      ],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let answer: RowReply | undefined;
    child.on("message", (message: RowReply) => {
      answer = message;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (answer?.kind === "ran") {
        resolve({ measured: answer.measured as Measured, memory: answer.memory });
      } else if (answer?.kind === "failed") {
        reject(new Error(`row ${job.key}: ${answer.message}`));
      } else {
        reject(new Error(`row ${job.key}: its process exited (${code}) without an answer`));
      }
    });
  });
}

// The sea-streamer-file crate's rows: its release programs (tooling/interop `bench-replay`,
// `bench-tail`, `bench-produce`), each run once per row and round with its peak resident set
// recorded as it exits (../rows/programPeak.ts), and the crate's writer that appends while a tail
// row follows.
import { execFileSync, spawn } from "node:child_process";
import { recordingPeak } from "../rows/programPeak.js";
import type { Apart } from "../rows/rowProcess.js";
import { burst, type FileTrial, messageBytes, type Run } from "./trial.js";

/** Runs the crate's program with `args`; its last line of output is its Run. */
function measured(rust: string, args: readonly string[]): Apart<Run> {
  const recorded = recordingPeak(rust, args);
  const out = execFileSync(recorded.command, recorded.args, { encoding: "utf8" });
  return { measured: JSON.parse(out) as Run, memory: { maxRssKiB: recorded.peakKiB() } };
}

/** The crate's writer appending `messages` to `path` (the tail rows' source, ours and the crate's). */
export function appendWithRust(rust: string, path: string, messages: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      rust,
      ["bench-write", path, String(messages), String(messageBytes), "--append"],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`writer exit ${code}`))));
  });
}

export const rustReplay = (t: FileTrial): Apart<Run> => measured(t.rust, ["bench-replay", t.path]);

/** The crate's producer: `sends` sends, then their receipts (1: each receipt before the next send). */
export const rustWrite = (t: FileTrial, sends: number): Apart<Run> =>
  measured(t.rust, [
    "bench-produce",
    t.path,
    String(t.messages),
    String(messageBytes),
    "--burst",
    String(sends),
  ]);

export const rustWriteBursts = (t: FileTrial): Apart<Run> => rustWrite(t, burst);

/** The crate's follower on the primed file at `t.path`, once it says "ready" the writer appends. */
export async function rustTail(t: FileTrial): Promise<Apart<Run>> {
  const recorded = recordingPeak(t.rust, ["bench-tail", t.path, String(t.messages)]);
  const child = spawn(recorded.command, recorded.args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let errors = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      errors += d;
      if (errors.includes("ready")) resolve();
    });
    exited.then((code) => reject(new Error(`rust tail exited (${code}): ${errors}`)));
  });
  await appendWithRust(t.rust, t.path, t.messages);
  const code = await exited;
  if (code !== 0) throw new Error(`rust tail exited (${code}): ${errors}`);
  return { measured: JSON.parse(out) as Run, memory: { maxRssKiB: recorded.peakKiB() } };
}

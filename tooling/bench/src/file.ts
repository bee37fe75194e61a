// The .ss file benchmark: @ruststream/file against the sea-streamer-file crate's own loops (release
// build of tooling/interop), 512-byte messages, interleaved rounds. Run from the repository root:
//
//   pnpm --filter @ruststream/tooling-bench bench:file [rounds] [messages]
//
// replay: both read the same file, written by the crate, to its end.
// tail:   each follower starts on a primed file, then the crate's writer (another process) appends;
//         the rate counts from a follower's first message to its last.
// write:  our producer (each send awaited; and in bursts of 256 sends sharing one write) against the
//         crate's producer driven the same two ways (`bench-produce`), and a plain sequential fs
//         write of the same frame bytes, one write per message.
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeFile, FileConsumer, FileProducer } from "@ruststream/file/format";
import { machine, type RowSummary, summarize, tableLines } from "./stats.js";

const ROUNDS = Number(process.argv[2] ?? 5);
const MESSAGES = Number(process.argv[3] ?? 200_000);
const SIZE = 512;
/** Sends per burst, ours and the crate's alike. */
const BURST = 256;
const CRATE = fileURLToPath(new URL("../../interop/", import.meta.url));
const TARGET = process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache/ruststream/interop-target");
const RUST = join(TARGET, "release", "ruststream-interop");

function build(): void {
  // Cached outside the clone: a second run compiles nothing.
  execFileSync("cargo", ["build", "--release", "--locked"], {
    cwd: CRATE,
    env: { ...process.env, CARGO_TARGET_DIR: TARGET, RUSTFLAGS: "" },
    stdio: "inherit",
  });
}

interface Run {
  readonly messages: number;
  readonly seconds: number;
}
const rate = (r: Run) => r.messages / r.seconds;

function rust(...args: string[]): Run {
  return JSON.parse(execFileSync(RUST, args, { encoding: "utf8" })) as Run;
}

const dir = mkdtempSync(join(tmpdir(), "ruststream-file-bench-"));
let fileNo = 0;
const fresh = () => join(dir, `f${++fileNo}.ss`);

async function oursReplay(path: string): Promise<Run> {
  const started = performance.now();
  const consumer = await FileConsumer.open(path, { streamKey: "bench" });
  let n = 0;
  for await (const _ of consumer) n++;
  return { messages: n, seconds: (performance.now() - started) / 1000 };
}

function primed(): string {
  const path = fresh();
  const p = FileProducer.open(path);
  p.sendNow("ruststream-internal", new TextEncoder().encode("1"));
  p.close();
  return path;
}

function appendWithRust(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(RUST, ["bench-write", path, String(MESSAGES), String(SIZE), "--append"], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`writer exit ${code}`))));
  });
}

async function oursTail(): Promise<Run> {
  const path = primed();
  const consumer = await FileConsumer.open(path, { streamKey: "bench", follow: true });
  const writing = appendWithRust(path);
  let n = 0;
  let started = 0;
  for await (const _ of consumer) {
    if (n++ === 0) started = performance.now();
    if (n === MESSAGES) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await writing;
  return { messages: n, seconds };
}

async function rustTail(): Promise<Run> {
  const path = primed();
  const child = spawn(RUST, ["bench-tail", path, String(MESSAGES)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
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
  await appendWithRust(path);
  const code = await exited;
  if (code !== 0) throw new Error(`rust tail exited (${code}): ${errors}`);
  return JSON.parse(out) as Run;
}

/** The crate's producer: `burst` sends, then their receipts (1: each receipt before the next send). */
function rustWrite(burst: number): Run {
  return rust("bench-produce", fresh(), String(MESSAGES), String(SIZE), "--burst", String(burst));
}

async function oursWrite(): Promise<Run> {
  const path = fresh();
  const p = FileProducer.open(path);
  const payload = new Uint8Array(SIZE).fill(0x61);
  const started = performance.now();
  // A publisher that awaits every send: one handover to the OS per message.
  for (let i = 0; i < MESSAGES; i++) await p.send("bench", payload);
  const seconds = (performance.now() - started) / 1000;
  p.close();
  return { messages: MESSAGES, seconds };
}

async function oursWriteBursts(): Promise<Run> {
  const path = fresh();
  const p = FileProducer.open(path);
  const payload = new Uint8Array(SIZE).fill(0x61);
  const started = performance.now();
  // Publishes of one turn share one write: BURST sends awaited together.
  for (let i = 0; i < MESSAGES; i += BURST) {
    const burst: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(MESSAGES, i + BURST); j++) burst.push(p.send("bench", payload));
    await Promise.all(burst);
  }
  const seconds = (performance.now() - started) / 1000;
  p.close();
  return { messages: MESSAGES, seconds };
}

function plainWrite(frames: Uint8Array[]): Run {
  const path = fresh();
  const fd = openSync(path, "w");
  const started = performance.now();
  for (const f of frames) writeSync(fd, f);
  const seconds = (performance.now() - started) / 1000;
  closeSync(fd);
  return { messages: frames.length, seconds };
}

async function main(): Promise<void> {
  build();
  const replayFile = fresh();
  rust("bench-write", replayFile, String(MESSAGES), String(SIZE));
  // The exact bytes of the frames, for the plain write.
  const decoded = decodeFile(new Uint8Array(readFileSync(replayFile)));
  const whole = readFileSync(replayFile);
  const frames = decoded.messages.map((m) => whole.subarray(m.offset, m.end));

  const rows: Record<string, number[]> = {
    "replay rust": [],
    "replay ours": [],
    "tail rust": [],
    "tail ours": [],
    "write plain": [],
    "write rust": [],
    "write ours": [],
    "write rust burst": [],
    "write burst": [],
  };
  for (let round = 1; round <= ROUNDS; round++) {
    rows["replay rust"]!.push(rate(rust("bench-replay", replayFile)));
    rows["replay ours"]!.push(rate(await oursReplay(replayFile)));
    rows["tail rust"]!.push(rate(await rustTail()));
    rows["tail ours"]!.push(rate(await oursTail()));
    rows["write plain"]!.push(rate(plainWrite(frames)));
    rows["write rust"]!.push(rate(rustWrite(1)));
    rows["write ours"]!.push(rate(await oursWrite()));
    rows["write rust burst"]!.push(rate(rustWrite(BURST)));
    rows["write burst"]!.push(rate(await oursWriteBursts()));
    // Files of earlier rounds go, so the disk holds at most one round's worth.
    for (let i = 2; i < fileNo; i++) rmSync(join(dir, `f${i}.ss`), { force: true });
    process.stderr.write(`round ${round}/${ROUNDS} done\n`);
  }
  const summary = Object.entries(rows).map(([name, rates]) => summarize(name, rates));
  const row = (name: string) => summary.find((r) => r.name === name) as RowSummary;
  const ratio = (a: string, b: string) => row(a).median / row(b).median;
  const ratios = {
    replayOursToRust: ratio("replay ours", "replay rust"),
    tailOursToRust: ratio("tail ours", "tail rust"),
    writeOursToRust: ratio("write ours", "write rust"),
    writeBurstToRust: ratio("write burst", "write rust burst"),
    writeOursToPlain: ratio("write ours", "write plain"),
    writeBurstToPlain: ratio("write burst", "write plain"),
  };
  console.log(`${MESSAGES} messages of ${SIZE} bytes, ${ROUNDS} interleaved rounds (msg/s)`);
  for (const line of tableLines(summary, (n) => Math.round(n).toLocaleString("en-US"))) {
    console.log(line);
  }
  console.log(
    `replay ours / rust (medians): ${ratios.replayOursToRust.toFixed(2)}  (target >= 1.00)`,
  );
  console.log(
    `tail   ours / rust (medians): ${ratios.tailOursToRust.toFixed(2)}  (target >= 1.50)`,
  );
  console.log(
    `write  ours / rust (medians): ${ratios.writeOursToRust.toFixed(2)}  (target >= 1.00)`,
  );
  console.log(
    `write  burst / rust burst (medians): ${ratios.writeBurstToRust.toFixed(2)}  (target >= 1.00)`,
  );
  console.log(`write  ours / plain (medians): ${ratios.writeOursToPlain.toFixed(2)}`);
  console.log(`write  burst / plain (medians): ${ratios.writeBurstToPlain.toFixed(2)}`);
  const result = {
    scenario:
      "@ruststream/file against the sea-streamer-file crate (release build of tooling/interop), 512-byte messages",
    command: `pnpm --filter @ruststream/tooling-bench bench:file ${ROUNDS} ${MESSAGES}`,
    date: new Date().toISOString(),
    machine: machine(),
    messagesPerRound: MESSAGES,
    rounds: ROUNDS,
    rows: summary,
    ratios,
  };
  writeFileSync(
    new URL("../results/file.json", import.meta.url),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  console.log("results written to tooling/bench/results/file.json");
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

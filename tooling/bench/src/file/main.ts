// The .ss file benchmark: @ruststream/file against the sea-streamer-file crate's own loops (release
// build of tooling/interop), 512-byte messages, interleaved rounds. Run from the repository root:
//
//   pnpm --filter @ruststream/tooling-bench bench:file [rounds] [messages] [file] [rows]
//
// replay: both read the same file, written by the crate, to its end; and the full app (FileBroker,
//         one subscriber) replays it too, against the format's reader as its raw loop.
// tail:   each follower starts on a primed file, then the crate's writer (another process) appends;
//         the rate counts from a follower's first message to its last.
// write:  our producer (each send awaited; and in bursts of 256 sends sharing one write) against the
//         crate's producer driven the same two ways (`bench-produce`), and a plain sequential fs
//         write of the same frame bytes, one write per message.
//
// Each of our rows runs each round in a process of its own (nodeRows.ts through ../rows/: an
// untimed warm-up run on 20,000 messages, then the timed one), which answers its peak resident set;
// each of the crate's runs is a program of its own, its peak recorded as it exits (crateRows.ts).
// file: the results' name under results/ (default file.json); rows: a comma list of the rows to run
// (their names with dashes: replay-ours,replay-app), default all.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FileProducer } from "@ruststream/file/format";
import { PeakTable } from "../rows/peakTable.js";
import { type Apart, runApart } from "../rows/rowProcess.js";
import { machine, summarize, tableLines } from "../stats.js";
import { rustReplay, rustTail, rustWrite, rustWriteBursts } from "./crateRows.js";
import type { FileTrial, Run } from "./trial.js";
import { messageBytes } from "./trial.js";

const ROUNDS = Number(process.argv[2] ?? 5);
const MESSAGES = Number(process.argv[3] ?? 200_000);
const FILE_ARG = process.argv[4];
const ROWS_ARG = process.argv[5];
/** Our rows' untimed warm-up run, in their own process before the timed one. */
const WARM = Math.min(MESSAGES, 20_000);
const CRATE = fileURLToPath(new URL("../../../interop/", import.meta.url));
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

const rate = (r: Run) => r.messages / r.seconds;
const dir = mkdtempSync(join(tmpdir(), "ruststream-file-bench-"));
let fileNo = 0;
const fresh = () => join(dir, `f${++fileNo}.ss`);

/** A fresh file primed as RustStream primes one: where a tail row's follower starts. */
function primed(): string {
  const path = fresh();
  const p = FileProducer.open(path);
  p.sendNow("ruststream-internal", new TextEncoder().encode("1"));
  p.close();
  return path;
}

/** What a row reads or writes: the replay file, or a fresh path (primed for a tail row). */
type Input = "replay" | "primed" | "fresh";

/** A row: its name in the table and the JSON, what it is given, and where it runs. */
type Row =
  | { readonly name: string; readonly input: Input; readonly runs: "node"; readonly key: string }
  | {
      readonly name: string;
      readonly input: Input;
      readonly runs: "rust";
      readonly run: (t: FileTrial) => Apart<Run> | Promise<Apart<Run>>;
    };

/** Every row, in the order each round runs them. */
const rowList: readonly Row[] = [
  { name: "replay rust", input: "replay", runs: "rust", run: rustReplay },
  { name: "replay ours", input: "replay", runs: "node", key: "replay-ours" },
  { name: "replay app", input: "replay", runs: "node", key: "replay-app" },
  { name: "tail rust", input: "primed", runs: "rust", run: rustTail },
  { name: "tail ours", input: "primed", runs: "node", key: "tail-ours" },
  { name: "write plain", input: "fresh", runs: "node", key: "write-plain" },
  { name: "write rust", input: "fresh", runs: "rust", run: (t) => rustWrite(t, 1) },
  { name: "write ours", input: "fresh", runs: "node", key: "write-ours" },
  { name: "write rust burst", input: "fresh", runs: "rust", run: rustWriteBursts },
  { name: "write burst", input: "fresh", runs: "node", key: "write-burst" },
];
/** A row's name as the rows argument gives it: "replay ours" is replay-ours. */
const slug = (row: Row) => row.name.replaceAll(" ", "-");
const chosen: readonly Row[] =
  ROWS_ARG === undefined
    ? rowList
    : ROWS_ARG.split(",").map((wanted) => {
        const row = rowList.find((r) => slug(r) === wanted);
        if (row === undefined) {
          throw new Error(`no row "${wanted}": the rows are ${rowList.map(slug).join(", ")}`);
        }
        return row;
      });
const nodeRowModule = new URL("./nodeRows.ts", import.meta.url).href;

/**
 * The medians' ratios: each one's key in the results JSON, the two rows (the first over the
 * second), and, for those printed, the line's label and issue 26's target where it sets one.
 */
interface RatioSpec {
  readonly key: string;
  readonly over: readonly [string, string];
  readonly label?: string;
  readonly target?: number;
}
const ratioList: readonly RatioSpec[] = [
  {
    key: "replayOursToRust",
    over: ["replay ours", "replay rust"],
    label: "replay ours / rust",
    target: 1,
  },
  { key: "replayAppToOurs", over: ["replay app", "replay ours"], label: "replay app / ours" },
  { key: "replayAppToRust", over: ["replay app", "replay rust"] },
  {
    key: "tailOursToRust",
    over: ["tail ours", "tail rust"],
    label: "tail   ours / rust",
    target: 1.5,
  },
  {
    key: "writeOursToRust",
    over: ["write ours", "write rust"],
    label: "write  ours / rust",
    target: 1,
  },
  {
    key: "writeBurstToRust",
    over: ["write burst", "write rust burst"],
    label: "write  burst / rust burst",
    target: 1,
  },
  { key: "writeOursToPlain", over: ["write ours", "write plain"], label: "write  ours / plain" },
  { key: "writeBurstToPlain", over: ["write burst", "write plain"], label: "write  burst / plain" },
];

/** One row once: ours in a process of its own (a warm-up run first), the crate's as its program. */
async function runRow(row: Row, replay: { timed: string; warm: string }): Promise<Apart<Run>> {
  const made: string[] = [];
  const trial = (messages: number, replayFile: string): FileTrial => {
    const framesOf = row.runs === "node" && row.key === "write-plain" ? replayFile : undefined;
    let path = replayFile;
    if (row.input !== "replay") {
      path = row.input === "primed" ? primed() : fresh();
      made.push(path);
    }
    return { rust: RUST, path, messages, ...(framesOf === undefined ? {} : { framesOf }) };
  };
  try {
    if (row.runs === "rust") return await row.run(trial(MESSAGES, replay.timed));
    return await runApart<Run>({
      module: nodeRowModule,
      key: row.key,
      warm: trial(WARM, replay.warm),
      timed: trial(MESSAGES, replay.timed),
    });
  } finally {
    // What a row wrote goes once it ran, so the disk holds at most a row's files and the replay's.
    for (const path of made) rmSync(path, { force: true });
  }
}

async function main(): Promise<void> {
  build();
  const replay = { timed: fresh(), warm: fresh() };
  execFileSync(RUST, ["bench-write", replay.timed, String(MESSAGES), String(messageBytes)]);
  execFileSync(RUST, ["bench-write", replay.warm, String(WARM), String(messageBytes)]);

  const rows: Record<string, number[]> = Object.fromEntries(chosen.map((r) => [r.name, []]));
  // The peak resident set of each row's process (ours: the row's own Node process; the crate's
  // program), MB.
  const peaks = new PeakTable();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const row of chosen) {
      const { measured, memory } = await runRow(row, replay);
      rows[row.name]!.push(rate(measured));
      peaks.add(row.name, memory);
    }
    process.stderr.write(`round ${round}/${ROUNDS} done\n`);
  }
  const summary = Object.entries(rows).map(([name, rates]) => ({
    ...summarize(name, rates),
    ...peaks.columns(name),
  }));
  const row = (name: string) => summary.find((r) => r.name === name);
  // Only between rows that ran (all of them, unless the rows argument chose some).
  const ratio = (a: string, b: string) => {
    const [ra, rb] = [row(a), row(b)];
    return ra === undefined || rb === undefined ? undefined : ra.median / rb.median;
  };
  const ratios = Object.fromEntries(ratioList.map((r) => [r.key, ratio(...r.over)]));
  // The full app's peak resident set over its raw loop's, the format's reader (issue 26: at most
  // 1.3); and each of ours over the crate's.
  const pairs: Array<[string, string, boolean]> = [
    ["replay app", "replay ours", true],
    ["replay app", "replay rust", false],
    ["replay ours", "replay rust", false],
    ["tail ours", "tail rust", false],
    ["write ours", "write rust", false],
    ["write burst", "write rust burst", false],
  ];
  const peakRatios = pairs
    .map(([a, b, bounded]) => peaks.ratio(a, b, bounded))
    .filter((r) => r !== undefined);
  console.log(
    `${MESSAGES} messages of ${messageBytes} bytes, ${ROUNDS} interleaved rounds (msg/s)`,
  );
  for (const line of tableLines(summary, (n) => Math.round(n).toLocaleString("en-US"))) {
    console.log(line);
  }
  for (const r of ratioList) {
    const value = ratios[r.key];
    if (r.label === undefined || value === undefined) continue;
    const target = r.target === undefined ? "" : `  (target >= ${r.target.toFixed(2)})`;
    console.log(`${r.label} (medians): ${value.toFixed(2)}${target}`);
  }
  const named = chosen.map((r) => ({ key: r.name, name: r.name }));
  for (const line of peaks.lines(named, peakRatios)) console.log(line);
  const result = {
    scenario:
      "@ruststream/file against the sea-streamer-file crate (release build of tooling/interop), 512-byte messages; the full app replaying the file against the format's reader; each of our rows and rounds in a process of its own and each of the crate's runs a program of its own, their peak resident sets measured",
    command: `pnpm --filter @ruststream/tooling-bench bench:file ${ROUNDS} ${MESSAGES}${FILE_ARG === undefined ? "" : ` ${FILE_ARG}`}${ROWS_ARG === undefined ? "" : ` ${ROWS_ARG}`}`,
    date: new Date().toISOString(),
    machine: machine(),
    messagesPerRound: MESSAGES,
    rounds: ROUNDS,
    rows: summary,
    ratios,
    peakRatios,
  };
  const file = `results/${FILE_ARG ?? "file.json"}`;
  writeFileSync(new URL(`../../${file}`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  console.log(`results written to tooling/bench/${file}`);
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

// Issue 13: a stream of 512-byte JSON orders drained by RustStream's own consumer (ruststream-fred,
// the pipelined mount) and by ours (the full app; the broker alone; a raw ioredis loop), each
// decoding every order into a typed value and acknowledging it, on one Redis, rows interleaved.
//
//   node --conditions=@ruststream/source --import tsx src/redis/drain/main.ts [seconds] [rounds] [rows] [file]
//
// rows: a comma list of rust, rust-plain, app, app-schema, broker, raw (default all but rust-plain);
// file: the results' name under results/ (default redis-drain.json for a full run, else
// redis-drain-quick.json, `-against-<commits>` added for rows at an earlier commit).
// REDIS_URL picks the server (a plain redis:// one: the Rust row speaks to it too); without it
// tooling/brokers starts its plain instance. The load generator runs in its own process and fills a
// fresh stream before every row of every round; the fill is not timed. Each of our rows runs each
// round in a process of its own (nodeRows.ts through ../../rows/: an untimed warm-up drain of a
// stream of its own, then the timed one), which answers its peak resident set too; RustStream's
// program runs once per drain, its peak recorded as it exits.
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { sourceRevision } from "../../revision.js";
import { type PeakColumns, PeakTable } from "../../rows/peakTable.js";
import { type Apart, runApart } from "../../rows/rowProcess.js";
import { machine, median, type RowSummary, summarize, tableLines } from "../../stats.js";
import { GeneratorProcess } from "../generatorProcess.js";
import { openRaw, serverTarget } from "../target.js";
import { redisAt } from "./against.js";
import type { ServedDrain } from "./nodeRows.js";
import { idSum, orderBytes } from "./order.js";
import { type Drained, type DrainTrial, readCount, rustDrain } from "./rows.js";
import { rustProgram } from "./rustProgram.js";
import { serverCpuMs } from "./serverCpu.js";

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 5);
const rowArg = process.argv[4] ?? "rust,app,app-schema,broker,raw";
const fileArg = process.argv[5];

/** A row: what it is called in the table and the JSON, and where it runs. */
type Row =
  | { readonly name: string; readonly runs: "node" }
  | { readonly name: string; readonly runs: "rust"; readonly plain: boolean };
type RowKey = string;

// The rows of ours on the package at an earlier commit are `app@<ref>`, `app-schema@<ref>` and
// `broker@<ref>`; the package is exported there once, before the rows' processes load it.
const against = new Map<string, Awaited<ReturnType<typeof redisAt>>>();
for (const key of rowArg.split(",")) {
  const ref = key.split("@")[1];
  if (ref !== undefined && !against.has(ref)) against.set(ref, await redisAt(ref));
}
function rowOf(key: string): Row {
  const [base, ref] = key.split("@");
  const earlier = ref === undefined ? undefined : against.get(ref)!;
  const at = earlier === undefined ? "" : ` (@${earlier.commit.slice(0, 7)})`;
  switch (base) {
    case "rust":
      if (ref === undefined) return { name: "RustStream, .pipeline()", runs: "rust", plain: false };
      break;
    case "rust-plain":
      if (ref === undefined) return { name: "RustStream, no window", runs: "rust", plain: true };
      break;
    case "app":
      return { name: `ours: full app, typed JSON${at}`, runs: "node" };
    case "app-schema":
      return { name: `ours: full app, JSON + Standard Schema${at}`, runs: "node" };
    case "broker":
      return { name: `ours: broker alone${at}`, runs: "node" };
    case "raw":
      if (ref === undefined) return { name: "raw ioredis, XACK per read", runs: "node" };
      break;
  }
  throw new Error(
    `unknown row "${key}": rust, rust-plain, app, app-schema, broker, raw, and app@<ref>, app-schema@<ref>, broker@<ref>`,
  );
}
const chosen: RowKey[] = rowArg.split(",");
const rust = chosen.some((key) => key.startsWith("rust")) ? rustProgram() : "";
const rowTable: Map<RowKey, Row> = new Map(chosen.map((key) => [key, rowOf(key)]));
const warmCount = 20_000;
const sizingCount = 100_000;
const group = "bench";

if (process.env.REDIS_URL === undefined) await ensureBrokers(["redis"]);
const url = process.env.REDIS_URL;
if (url === undefined) throw new Error("no Redis server: set REDIS_URL, or start tooling/brokers");

const source = sourceRevision(["packages/core/src", "packages/redis/src", "tooling/interop/src"]);
const admin = await openRaw(serverTarget(url), "admin");
const serverVersion = /redis_version:([^\r\n]+)/.exec(await admin.info("server"))?.[1] ?? "unknown";
const generator = await GeneratorProcess.start(serverTarget(url));
const loadBefore = loadavg();
let trials = 0;

/** A fresh stream filled with `count` orders (untimed), its group created at its start. */
async function freshStream(count: number): Promise<DrainTrial> {
  const key = `bench:drain:${process.pid}:${trials++}`;
  await generator.run({ kind: "fill-stream-orders", key, count });
  await admin.xgroup("CREATE", key, group, "0");
  return { url: url!, key, group, count };
}
const nodeRowModule = new URL("./nodeRows.ts", import.meta.url).href;

/**
 * One row over a fresh stream: drained (timed), checked, deleted. Ours runs in a process of its own
 * (../../rows/), which first drains a warm-up stream of its own untimed; RustStream's program runs
 * once per drain, its peak recorded as it exits.
 */
async function runRow(key: RowKey, count: number): Promise<Apart<ServedDrain>> {
  const row = rowTable.get(key)!;
  let apart: Apart<ServedDrain>;
  let timed: DrainTrial;
  if (row.runs === "rust") {
    timed = await freshStream(count);
    const serverBefore = await serverCpuMs(admin);
    const drained = await rustDrain(rust, row.plain)(timed);
    const serverCpu = (await serverCpuMs(admin)) - serverBefore;
    apart = { ...drained, measured: { ...drained.measured, serverCpuMs: serverCpu } };
  } else {
    const warm = await freshStream(warmCount);
    timed = await freshStream(count);
    apart = await runApart<ServedDrain>({ module: nodeRowModule, key, warm, timed });
    await admin.unlink(warm.key);
  }
  const drained = apart.measured;
  const where = `${row.name} on ${timed.key}`;
  if (drained.messages !== count) throw new Error(`${where}: ${drained.messages} of ${count}`);
  if (drained.idSum !== idSum(count)) {
    throw new Error(`${where}: ids summed to ${drained.idSum}, not ${idSum(count)}`);
  }
  const [pending] = (await admin.xpending(timed.key, group)) as [number];
  if (pending !== 0) throw new Error(`${where}: ${pending} entries left pending`);
  await admin.unlink(timed.key);
  return apart;
}

const rateOf = (count: number, d: Drained) => (count / d.ms) * 1000;

// Untimed warm-up of every row (the JIT sees every path), then a sizing run of each about a second
// long; every row then drains the same count, the fastest row's rate times the seconds asked for.
for (const key of chosen) await runRow(key, warmCount);
let fastest = 0;
for (const key of chosen) {
  const rate = rateOf(sizingCount, (await runRow(key, sizingCount)).measured);
  process.stderr.write(`sizing: ${rowTable.get(key)!.name} ${(rate / 1000).toFixed(1)} k/s\n`);
  fastest = Math.max(fastest, rate);
}
const count = Math.max(warmCount, Math.round((fastest * seconds * 1.2) / 1000) * 1000);
process.stderr.write(`${count} orders per row and round\n`);

const rates = new Map<RowKey, number[]>();
const durations = new Map<RowKey, number[]>();
// CPU per order, in microseconds: the consumer process's, and the server's over the whole row
// (from before the consumer connects to after its last ack). Less at the mercy of the machine's
// load than a rate.
const consumerCpu = new Map<RowKey, number[]>();
const serverCpu = new Map<RowKey, number[]>();
// The peak resident set of the row's process (ours: the row's own Node process; RustStream's
// program), MB.
const peaks = new PeakTable();
const push = <T>(map: Map<RowKey, T[]>, key: RowKey, value: T) =>
  map.set(key, [...(map.get(key) ?? []), value]);
const began = performance.now();
for (let round = 0; round < rounds; round++) {
  // The order of the rows turns each round, so none always runs first.
  for (let i = 0; i < chosen.length; i++) {
    const key = chosen[(i + round) % chosen.length]!;
    const { measured: run, memory } = await runRow(key, count);
    peaks.add(key, memory);
    push(rates, key, rateOf(count, run));
    push(durations, key, run.ms / 1000);
    push(consumerCpu, key, (run.cpuMs * 1000) / count);
    push(serverCpu, key, (run.serverCpuMs * 1000) / count);
  }
  process.stderr.write(`round ${round + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`);
}
const wallSeconds = (performance.now() - began) / 1000;
const loadAfter = loadavg();
generator.stop();
admin.disconnect();

const rows: (RowSummary &
  PeakColumns & {
    key: RowKey;
    seconds: number[];
    consumerCpuUsPerOrder: number[];
    serverCpuUsPerOrder: number[];
  })[] = chosen.map((key) => ({
  ...summarize(rowTable.get(key)!.name, rates.get(key)!),
  key,
  seconds: durations.get(key)!,
  consumerCpuUsPerOrder: consumerCpu.get(key)!,
  serverCpuUsPerOrder: serverCpu.get(key)!,
  ...peaks.columns(key),
}));
// The full app's peak resident set over its raw loop's (issue 26: at most 1.3), and RustStream's.
const peakRatios = ["app", "app-schema", "broker"]
  .flatMap((key) => [peaks.ratio(key, "raw"), peaks.ratio(key, "rust", false)])
  .filter((r) => r !== undefined);
const rustRow = rows.find((r) => r.key === "rust");
const ratios = Object.fromEntries(
  rows
    .filter((r) => rustRow !== undefined && r !== rustRow)
    .map((r) => [r.key, r.median / rustRow!.median]),
);

const fmt = (rate: number) => `${(rate / 1e3).toFixed(1)} k/s`;
console.log(
  `Redis ${serverVersion}, ${orderBytes}-byte JSON orders, XREADGROUP COUNT ${readCount}, ${count} per row, ${rounds} interleaved rounds`,
);
for (const line of tableLines(rows, fmt)) console.log(line);
if (rustRow !== undefined) {
  for (const [key, ratio] of Object.entries(ratios)) {
    console.log(`median ${rowTable.get(key)!.name} / RustStream: ${ratio.toFixed(2)}`);
  }
}
console.log("CPU per order, median (consumer process / redis-server):");
for (const r of rows) {
  console.log(
    `  ${r.name}: ${median(r.consumerCpuUsPerOrder).toFixed(2)} µs / ${median(r.serverCpuUsPerOrder).toFixed(2)} µs`,
  );
}
for (const line of peaks.lines(rows, peakRatios)) console.log(line);
console.log(
  `seconds per row: ${rows.map((r) => `${r.key} ${Math.min(...r.seconds).toFixed(1)}-${Math.max(...r.seconds).toFixed(1)}`).join(", ")}`,
);
console.log(
  `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, after ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
);

const full = seconds >= 5 && rounds >= 5;
const command = `node --conditions=@ruststream/source --import tsx src/redis/drain/main.ts ${seconds} ${rounds}${process.argv[4] === undefined ? "" : ` ${rowArg}`}${fileArg === undefined ? "" : ` ${fileArg}`}`;
const refs = [...against.values()].map((a) => a.commit.slice(0, 7));
const file = `results/${fileArg ?? `${full ? "redis-drain" : "redis-drain-quick"}${refs.length > 0 ? `-against-${refs.join("-")}` : ""}.json`}`;
writeFileSync(
  new URL(`../../../${file}`, import.meta.url),
  `${JSON.stringify(
    {
      scenario:
        "A pre-filled Redis stream of 512-byte JSON orders drained by RustStream (ruststream-fred 0.7.1, pipelined mount) and by @ruststream/redis (full app, broker alone) and a raw ioredis loop; decode into a typed value, ack",
      command,
      date: new Date().toISOString(),
      // Host and port only: a URL may carry a password.
      machine: { ...machine(), redis: serverVersion, server: new URL(url).host },
      load: { before: loadBefore, after: loadAfter },
      source,
      orderBytes,
      readCount,
      count,
      secondsPerRow: seconds,
      rounds,
      wallSeconds,
      against: Object.fromEntries([...against].map(([ref, a]) => [ref, a.commit])),
      rows,
      medianToRustStream: ratios,
      peakRatios,
    },
    (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value),
    2,
  )}\n`,
);
console.log(`\nresults written to tooling/bench/${file} (${wallSeconds.toFixed(0)} s of rounds)`);

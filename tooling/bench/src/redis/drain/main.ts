// Issue 13: a stream of 512-byte JSON orders drained by RustStream's own consumer (ruststream-fred,
// the pipelined mount) and by ours (the full app; the broker alone; a raw ioredis loop), each
// decoding every order into a typed value and acknowledging it, on one Redis, rows interleaved.
//
//   node --conditions=@ruststream/source --import tsx src/redis/drain/main.ts [seconds] [rounds] [rows]
//
// rows: a comma list of rust, rust-plain, app, app-schema, broker, raw (default all but rust-plain).
// REDIS_URL picks the server (a plain redis:// one: the Rust row speaks to it too); without it
// tooling/brokers starts its plain instance. The load generator runs in its own process and fills a
// fresh stream before every row of every round; the fill is not timed.
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import * as current from "@ruststream/redis";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { sourceRevision } from "../../revision.js";
import { machine, median, type RowSummary, summarize, tableLines } from "../../stats.js";
import { GeneratorProcess } from "../generatorProcess.js";
import { openRaw, serverTarget } from "../target.js";
import { redisAt } from "./against.js";
import { idSum, orderBytes } from "./order.js";
import {
  appDrain,
  brokerDrain,
  type Drained,
  type DrainRow,
  rawDrain,
  readCount,
  rustDrain,
} from "./rows.js";
import { rustProgram } from "./rustProgram.js";

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 5);
const rowArg = process.argv[4] ?? "rust,app,app-schema,broker,raw";

/** A row: what it is called in the table and the JSON, and how it drains. */
interface Row {
  readonly name: string;
  readonly run: DrainRow;
}
type RowKey = string;

// The rows of ours on the package at an earlier commit are `app@<ref>`, `app-schema@<ref>` and
// `broker@<ref>`.
const against = new Map<string, Awaited<ReturnType<typeof redisAt>>>();
for (const key of rowArg.split(",")) {
  const ref = key.split("@")[1];
  if (ref !== undefined && !against.has(ref)) against.set(ref, await redisAt(ref));
}
function rowOf(key: string): Row {
  const [base, ref] = key.split("@");
  const earlier = ref === undefined ? undefined : against.get(ref)!;
  const redis = earlier?.redis ?? current;
  const at = earlier === undefined ? "" : ` (@${earlier.commit.slice(0, 7)})`;
  switch (base) {
    case "rust":
      if (ref === undefined)
        return { name: "RustStream, .pipeline()", run: rustDrain(rust, false) };
      break;
    case "rust-plain":
      if (ref === undefined) return { name: "RustStream, no window", run: rustDrain(rust, true) };
      break;
    case "app":
      return { name: `ours: full app, typed JSON${at}`, run: appDrain(redis, false) };
    case "app-schema":
      return { name: `ours: full app, JSON + Standard Schema${at}`, run: appDrain(redis, true) };
    case "broker":
      return { name: `ours: broker alone${at}`, run: brokerDrain(redis) };
    case "raw":
      if (ref === undefined) return { name: "raw ioredis, XACK per read", run: rawDrain };
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

/** The server's CPU time so far (user + system), in ms. */
async function serverCpuMs(): Promise<number> {
  const info = await admin.info("cpu");
  const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return (field("used_cpu_user") + field("used_cpu_sys")) * 1000;
}

interface RowRun extends Drained {
  /** The server's CPU time while the row drained (the generator is idle then), in ms. */
  readonly serverCpuMs: number;
}

/** One row over a fresh key: fill and create the group (untimed), drain (timed), check, delete. */
async function runRow(key: RowKey, count: number): Promise<RowRun> {
  const stream = `bench:drain:${process.pid}:${trials++}`;
  await generator.run({ kind: "fill-stream-orders", key: stream, count });
  await admin.xgroup("CREATE", stream, group, "0");
  const serverBefore = await serverCpuMs();
  const drained = await rowTable.get(key)!.run({ url: url!, key: stream, group, count });
  const serverCpu = (await serverCpuMs()) - serverBefore;
  const where = `${rowTable.get(key)!.name} on ${stream}`;
  if (drained.messages !== count) throw new Error(`${where}: ${drained.messages} of ${count}`);
  if (drained.idSum !== idSum(count)) {
    throw new Error(`${where}: ids summed to ${drained.idSum}, not ${idSum(count)}`);
  }
  const [pending] = (await admin.xpending(stream, group)) as [number];
  if (pending !== 0) throw new Error(`${where}: ${pending} entries left pending`);
  await admin.unlink(stream);
  return { ...drained, serverCpuMs: serverCpu };
}

const rateOf = (count: number, d: Drained) => (count / d.ms) * 1000;

// Untimed warm-up of every row (the JIT sees every path), then a sizing run of each about a second
// long; every row then drains the same count, the fastest row's rate times the seconds asked for.
for (const key of chosen) await runRow(key, warmCount);
let fastest = 0;
for (const key of chosen) {
  const rate = rateOf(sizingCount, await runRow(key, sizingCount));
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
const push = <T>(map: Map<RowKey, T[]>, key: RowKey, value: T) =>
  map.set(key, [...(map.get(key) ?? []), value]);
const began = performance.now();
for (let round = 0; round < rounds; round++) {
  // The order of the rows turns each round, so none always runs first.
  for (let i = 0; i < chosen.length; i++) {
    const key = chosen[(i + round) % chosen.length]!;
    const run = await runRow(key, count);
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

const rows: (RowSummary & {
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
}));
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
console.log(
  `seconds per row: ${rows.map((r) => `${r.key} ${Math.min(...r.seconds).toFixed(1)}-${Math.max(...r.seconds).toFixed(1)}`).join(", ")}`,
);
console.log(
  `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, after ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
);

const full = seconds >= 5 && rounds >= 5;
const command = `node --conditions=@ruststream/source --import tsx src/redis/drain/main.ts ${seconds} ${rounds}${process.argv[4] === undefined ? "" : ` ${rowArg}`}`;
const refs = [...against.values()].map((a) => a.commit.slice(0, 7));
const file = `results/${full ? "redis-drain" : "redis-drain-quick"}${refs.length > 0 ? `-against-${refs.join("-")}` : ""}.json`;
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
    },
    (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value),
    2,
  )}\n`,
);
console.log(`\nresults written to tooling/bench/${file} (${wallSeconds.toFixed(0)} s of rounds)`);

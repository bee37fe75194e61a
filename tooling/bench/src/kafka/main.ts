// Kafka consumers draining a pre-filled topic of 512-byte JSON orders: the raw librdkafka and kafkajs
// loops, @ruststream/kafka's broker alone, and the full app under `auto` and `tracked`, on the Kafka
// of tooling/brokers, rows interleaved over rounds.
//
//   node --conditions=@ruststream/source --import tsx src/kafka/main.ts [count] [rounds] [rows] [file]
//
// rows: a comma list of the keys in rowTable.ts (default: all but app-kafkajs-tracked); file: the
// results' name under results/ (default kafka.json for count >= 200k and rounds >= 5, else
// kafka-quick.json). Every row runs each round in a process of its own (rowChild.ts: an untimed
// warm-up drain, then the timed one; ../rows/), which answers its rate, CPU and peak resident memory.
// KAFKA_BROKERS picks the cluster; without it tooling/brokers starts its Kafka. The producer runs
// in its own process and fills a fresh topic before every row of every round; the fill is not
// timed. Every row is checked: the count and the sum of the ids it decoded, and its group's
// committed offsets at the end of every partition once it closed.
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import rdkafka from "@confluentinc/kafka-javascript";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { idSum, orderBytes } from "../redis/drain/order.js";
import { sourceRevision } from "../revision.js";
import { type PeakColumns, type PeakRatio, PeakTable, peakRssBound } from "../rows/peakTable.js";
import { type Apart, runApart } from "../rows/rowProcess.js";
import { machine, median, type RowSummary, summarize, tableLines } from "../stats.js";
import { ProducerProcess } from "./producerProcess.js";
import { fastestPull, type Trial } from "./rawRows.js";
import { defaultRows, rowOf } from "./rowTable.js";
import type { Drained } from "./tally.js";
import { ratioPairs } from "./targets.js";

const count = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 5);
const chosen = (process.argv[4] ?? defaultRows.join(",")).split(",");
const fileArg = process.argv[5];
const rows = new Map(chosen.map((key) => [key, rowOf(key)]));
/**
 * Partitions of every topic; the producer writes round robin over them. KAFKA_PARTITIONS changes it
 * (issue 26 measured memory on one partition).
 */
const partitions = Number(process.env.KAFKA_PARTITIONS ?? 4);
const warmCount = Math.min(count, 20_000);

if (process.env.KAFKA_BROKERS === undefined) await ensureBrokers(["kafka"]);
const brokers = process.env.KAFKA_BROKERS;
if (brokers === undefined) {
  throw new Error("no Kafka: set KAFKA_BROKERS, or start tooling/brokers (pnpm brokers up kafka)");
}

const source = sourceRevision(["packages/core/src", "packages/kafka/src"]);
const producer = await ProducerProcess.start(brokers);
const loadBefore = loadavg();
let trials = 0;

/** A fresh topic and group, the topic filled with `messages` orders (untimed). */
async function freshDrain(messages: number): Promise<Trial> {
  const topic = `bench.kafka.${process.pid}.${trials}`;
  const group = `bench-kafka-${process.pid}-${trials++}`;
  await producer.fill(topic, partitions, messages);
  return { brokers: brokers!, topic, group, count: messages };
}
const rowModule = new URL("./rowTable.ts", import.meta.url).href;

/** The group's committed offsets at the end of every partition, then the topic and group deleted. */
async function checkCommitted(where: string, topic: string, group: string): Promise<void> {
  const finished = await producer.finish(topic, group);
  if (finished.lag !== 0) {
    throw new Error(
      `${where}: the group's committed offsets leave ${finished.lag} records behind (committed/end: ${finished.partitions})`,
    );
  }
}

/**
 * One row in one round, in a process of its own: a warm-up topic and the timed one filled
 * (untimed), both drained there, the timed drain's count and ids checked, both groups' commits.
 */
async function runRow(key: string, messages: number): Promise<Apart<Drained>> {
  const warm = await freshDrain(warmCount);
  const timed = await freshDrain(messages);
  const row = rows.get(key)!;
  const apart = await runApart<Drained>({ module: rowModule, key, warm, timed });
  const drained = apart.measured;
  const where = `${row.name} on ${timed.topic}`;
  if (drained.messages !== messages)
    throw new Error(`${where}: ${drained.messages} of ${messages}`);
  if (drained.idSum !== idSum(messages)) {
    throw new Error(`${where}: ids summed to ${drained.idSum}, not ${idSum(messages)}`);
  }
  await checkCommitted(`${row.name} (warm-up) on ${warm.topic}`, warm.topic, warm.group);
  await checkCommitted(where, timed.topic, timed.group);
  return apart;
}

const rateOf = (d: Drained) => (d.messages / d.ms) * 1000;

const rates = new Map<string, number[]>();
const durations = new Map<string, number[]>();
// CPU per order in microseconds, the row's process's (librdkafka's threads included): less at the mercy
// of the machine's load than a rate.
const cpu = new Map<string, number[]>();
// The row's process's peak resident set (warm-up and timed drain both; the timed one is larger),
// and the peaks of its JS heap and of its Buffers sampled over the timed drain: which part grew.
const peaks = new PeakTable();
const push = (map: Map<string, number[]>, key: string, value: number) =>
  map.set(key, [...(map.get(key) ?? []), value]);
const began = performance.now();
for (let round = 0; round < rounds; round++) {
  // The order of the rows turns each round, so none always runs first.
  for (let i = 0; i < chosen.length; i++) {
    const key = chosen[(i + round) % chosen.length]!;
    const { measured: drained, memory } = await runRow(key, count);
    push(rates, key, rateOf(drained));
    push(durations, key, drained.ms / 1000);
    push(cpu, key, (drained.cpuMs * 1000) / count);
    peaks.add(key, memory);
  }
  process.stderr.write(`round ${round + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`);
}
const wallSeconds = (performance.now() - began) / 1000;
const loadAfter = loadavg();
producer.stop();

interface KafkaRowSummary extends RowSummary, PeakColumns {
  readonly key: string;
  readonly seconds: number[];
  readonly cpuUsPerOrder: number[];
}
const summaries: KafkaRowSummary[] = chosen.map((key) => ({
  ...summarize(rows.get(key)!.name, rates.get(key)!),
  key,
  seconds: durations.get(key)!,
  cpuUsPerOrder: cpu.get(key)!,
  ...peaks.columns(key),
}));
const byKey = new Map(summaries.map((s) => [s.key, s]));

/**
 * Full app / raw loop at the medians: the rate's ratio, the raw loop's CPU per order over the app's,
 * and the app's peak resident set over the raw loop's (issue 26's bound: at most 1.3).
 */
interface Ratio extends PeakRatio {
  readonly rate: number;
  readonly cpu: number;
  /** The least `rate` the target allows (1 - the overhead allowed), when there is one. */
  readonly target?: number;
}
const ratios: Ratio[] = [];
for (const [row, against, target] of ratioPairs) {
  const a = byKey.get(row);
  const b = byKey.get(against);
  const peak = peaks.ratio(row, against);
  if (a === undefined || b === undefined || peak === undefined) continue;
  ratios.push({
    ...peak,
    rate: a.median / b.median,
    cpu: median(b.cpuUsPerOrder) / median(a.cpuUsPerOrder),
    ...(target === undefined ? {} : { target }),
  });
}

const fmt = (rate: number) => `${(rate / 1e3).toFixed(1)} k/s`;
console.log(
  `Kafka at ${brokers}, librdkafka ${rdkafka.librdkafkaVersion}, ${orderBytes}-byte JSON orders, ${partitions} partitions, ${count} per row, ${rounds} interleaved rounds`,
);
for (const line of tableLines(summaries, fmt)) console.log(line);
console.log("CPU per order, median (the row's process, librdkafka's threads included):");
for (const s of summaries) console.log(`  ${s.name}: ${median(s.cpuUsPerOrder).toFixed(2)} µs`);
for (const line of peaks.lines(summaries)) console.log(line);
console.log(
  "ratios at the medians (rate; raw CPU per order / row's; row's peak RSS / raw's, at most 1.3):",
);
for (const r of ratios) {
  const verdict =
    r.target === undefined
      ? ""
      : r.rate >= r.target
        ? ` (target >= ${r.target}: met)`
        : ` (target >= ${r.target}: missed)`;
  console.log(
    `  ${rows.get(r.row)!.name} / ${rows.get(r.against)!.name}: ${r.rate.toFixed(3)}; CPU ${r.cpu.toFixed(3)}${verdict}; peak RSS ${r.peakRss.toFixed(2)}${r.withinBound ? "" : ` (over ${peakRssBound})`}`,
  );
}
console.log(
  `seconds per row: ${summaries.map((s) => `${s.key} ${Math.min(...s.seconds).toFixed(1)}-${Math.max(...s.seconds).toFixed(1)}`).join(", ")}`,
);
console.log(
  `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, after ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
);

const full = count >= 200_000 && rounds >= 5;
const command = `${partitions === 4 ? "" : `KAFKA_PARTITIONS=${partitions} `}pnpm --filter @ruststream/tooling-bench bench:kafka ${count} ${rounds}${process.argv[4] === undefined ? "" : ` ${chosen.join(",")}`}${fileArg === undefined ? "" : ` ${fileArg}`}`;
const file = `results/${fileArg ?? (full ? "kafka.json" : "kafka-quick.json")}`;
writeFileSync(
  new URL(`../../${file}`, import.meta.url),
  `${JSON.stringify(
    {
      scenario: `A pre-filled Kafka topic of 512-byte JSON orders (${partitions} partitions) drained by a raw librdkafka loop, a raw kafkajs loop, @ruststream/kafka's broker alone and the full app under auto and tracked; each order decoded and acknowledged; each row and round in a process of its own, its peak resident set measured`,
      command,
      date: new Date().toISOString(),
      machine: { ...machine(), librdkafka: rdkafka.librdkafkaVersion, brokers },
      load: { before: loadBefore, after: loadAfter },
      source,
      orderBytes,
      partitions,
      rawPull: fastestPull,
      count,
      rounds,
      wallSeconds,
      rows: summaries,
      ratios,
    },
    null,
    2,
  )}\n`,
);
console.log(`\nresults written to tooling/bench/${file} (${wallSeconds.toFixed(0)} s of rounds)`);

// What tracing costs on a real broker's path: the full app draining a pre-filled Redis stream (the
// Redis drain's app row) and a pre-filled Kafka topic (the Kafka bench's full app, librdkafka,
// auto), each without tracing, with `tracing()` under the SDK of ../tracingSdk.ts, and with only a
// bare SDK span per delivery (the floor); the same app, the same orders, rows interleaved with their
// order turned each round, each row and round in a process of its own (../../rows/: an untimed
// warm-up drain of as many orders, then the timed one).
//
//   pnpm --filter @ruststream/tooling-bench bench:ops-drain [count] [rounds] [brokers] [modes] [file]
//
// brokers: a comma list of redis, kafka (default both); modes: of off, traced, sampled (1% of
// traces), floor, at (tracing() as @ruststream/otel was at OTEL_AT=<ref>) (default
// off,traced,floor); file: the results' name under results/ (default
// ops-drain.json). REDIS_URL and KAFKA_BROKERS pick the servers, else tooling/brokers starts them.
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { Drained } from "../../kafka/tally.js";
import { sourceRevision } from "../../revision.js";
import { runApart } from "../../rows/rowProcess.js";
import { byRound, machine, median, type RowSummary, summarize, tableLines } from "../../stats.js";
import { otelAt } from "../tracing.js";
import { type DrainBroker, type DrainMode, drainBrokers, drainKey, drainModes } from "./rows.js";
import { type DrainTrials, trialsOf } from "./trials.js";

const count = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 5);
const brokers = (process.argv[4] ?? "redis,kafka").split(",") as DrainBroker[];
const modes = (process.argv[5] ?? "off,traced,floor").split(",") as DrainMode[];
const fileArg = process.argv[6];
for (const b of brokers) if (!drainBrokers.includes(b)) throw new Error(`no drain broker ${b}`);
for (const m of modes) if (!drainModes.includes(m)) throw new Error(`no drain mode ${m}`);
// A warm-up drain as long as the timed one: a process's first hundred thousand deliveries run
// slower while V8 sizes its young generation, and more so with tracing, which allocates more per
// delivery; after 20 000 the rows still compared the collector's warm-up as much as the rows.
const warmCount = count;
const rowModule = new URL("./rows.ts", import.meta.url).href;
const modeName: Record<DrainMode, string> = {
  off: "without tracing",
  traced: "tracing()",
  sampled: "tracing(), 1% sampled",
  floor: "floor: one bare SDK span per delivery",
  at: `tracing() at ${otelAt}`,
};

const source = sourceRevision([
  "packages/core/src",
  "packages/otel/src",
  "packages/redis/src",
  "packages/kafka/src",
]);
const loadBefore = loadavg();
const began = performance.now();

interface DrainRowSummary extends RowSummary {
  readonly key: string;
  readonly broker: DrainBroker;
  readonly mode: DrainMode;
  /** The row's process's CPU per order, µs, each round (librdkafka's threads included). */
  readonly cpuUsPerOrder: number[];
}
/** A row over another, round by round: CPU per order (above 1: costs more) and rate (below 1: slower). */
interface DrainRatio {
  readonly broker: DrainBroker;
  readonly row: DrainMode;
  readonly against: DrainMode;
  readonly cpuByRound: number[];
  readonly cpu: number;
  readonly rateByRound: number[];
  readonly rate: number;
}
const summaries: DrainRowSummary[] = [];
const ratios: DrainRatio[] = [];
const where: Record<string, string> = {};

/** One broker's rows over every round: each row drains a fresh stream or topic of `count` orders. */
async function drainRounds(broker: DrainBroker, trials: DrainTrials): Promise<void> {
  const rates = new Map<DrainMode, number[]>();
  const cpu = new Map<DrainMode, number[]>();
  const push = (map: Map<DrainMode, number[]>, mode: DrainMode, value: number) =>
    map.set(mode, [...(map.get(mode) ?? []), value]);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < modes.length; i++) {
      const mode = modes[(i + round) % modes.length]!;
      const key = drainKey(broker, mode);
      const warm = await trials.fresh(warmCount);
      const timed = await trials.fresh(count);
      const { measured } = await runApart<Drained>({ module: rowModule, key, warm, timed });
      await trials.check(key, timed, measured);
      // The warm-up's drain is not answered, so not checked; its stream or topic goes all the same.
      await trials.discard(warm);
      push(rates, mode, (measured.messages / measured.ms) * 1000);
      push(cpu, mode, (measured.cpuMs * 1000) / measured.messages);
    }
    process.stderr.write(
      `${broker}: round ${round + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`,
    );
  }
  for (const mode of modes) {
    summaries.push({
      ...summarize(`${broker}, ${modeName[mode]}`, rates.get(mode)!),
      key: drainKey(broker, mode),
      broker,
      mode,
      cpuUsPerOrder: cpu.get(mode)!,
    });
  }
  const pairs: [DrainMode, DrainMode][] = [
    ["traced", "off"],
    ["sampled", "off"],
    ["floor", "off"],
    ["traced", "floor"],
    ["at", "off"],
    ["at", "floor"],
    ["traced", "at"],
  ];
  for (const [row, against] of pairs) {
    if (!modes.includes(row) || !modes.includes(against)) continue;
    const cpuByRound = byRound(cpu.get(row)!, cpu.get(against)!);
    const rateByRound = byRound(rates.get(row)!, rates.get(against)!);
    ratios.push({
      broker,
      row,
      against,
      cpuByRound,
      cpu: median(cpuByRound),
      rateByRound,
      rate: median(rateByRound),
    });
  }
}

const fmt = (rate: number) => `${(rate / 1e3).toFixed(1)} k/s`;
const range = (values: readonly number[]) =>
  `${median(values).toFixed(3)} (rounds: ${Math.min(...values).toFixed(3)}-${Math.max(...values).toFixed(3)})`;
const args = process.argv.slice(2).join(" ");
const file = `results/${fileArg ?? "ops-drain.json"}`;

/** Prints what the brokers drained so far and writes it: a broker that fails later loses no other's. */
function report(): void {
  const loadAfter = loadavg();
  const wallSeconds = (performance.now() - began) / 1000;
  console.log(
    `tracing on a real broker's path: the full app draining ${count} 512-byte JSON orders per row and round, ${rounds} interleaved rounds`,
  );
  for (const line of tableLines(summaries, fmt)) console.log(line);
  console.log("CPU per order, median (the row's process):");
  for (const s of summaries) console.log(`  ${s.name}: ${median(s.cpuUsPerOrder).toFixed(2)} µs`);
  console.log(
    "ratios over rounds paired (CPU per order: above 1 costs more; rate: below 1 is slower):",
  );
  for (const r of ratios) {
    console.log(
      `  ${r.broker}, ${modeName[r.row]} / ${modeName[r.against]}: CPU ${range(r.cpuByRound)}, rate ${range(r.rateByRound)}`,
    );
  }
  console.log(
    `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, now ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
  );
  writeFileSync(
    new URL(`../../../${file}`, import.meta.url),
    `${JSON.stringify(
      {
        scenario:
          "tracing on a real broker's path: the full app draining a pre-filled Redis stream and a pre-filled Kafka topic (4 partitions, librdkafka, auto commit) of 512-byte JSON orders, without tracing, with tracing() (every trace sampled, BatchSpanProcessor, an exporter that drops), and with one bare SDK span per delivery; each row and round in a process of its own, after a warm-up drain as long",
        command: `${otelAt === undefined ? "" : `OTEL_AT=${otelAt} `}pnpm --filter @ruststream/tooling-bench bench:ops-drain${args === "" ? "" : ` ${args}`}`,
        date: new Date().toISOString(),
        machine: { ...machine(), ...where },
        load: { before: loadBefore, after: loadAfter },
        source,
        count,
        rounds,
        wallSeconds,
        rows: summaries,
        ratios,
      },
      (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value),
      2,
    )}\n`,
  );
  console.log(`\nresults written to tooling/bench/${file} (${wallSeconds.toFixed(0)} s)`);
}

for (const broker of brokers) {
  const trials = await trialsOf(broker);
  where[broker] = trials.where;
  try {
    await drainRounds(broker, trials);
  } finally {
    trials.close();
  }
  report();
}

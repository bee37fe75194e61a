// The rounds every "full app against its raw loop" drain bench runs (NATS, RabbitMQ, PostgreSQL):
// each row in each round in a process of its own (rowProcess.ts: an untimed warm-up drain, then the
// timed one), on a trial the bench filled for it (untimed) and checks after it; the rows' order
// turning each round; the rate, CPU per order and peak memory of every row; and each full app held
// against its raw loop at the medians and round by round (the two ran seconds apart, so a round the
// machine slowed for both cancels out). Prints the tables and writes the results JSON.
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { Drained } from "../kafka/tally.js";
import { idSum } from "../redis/drain/order.js";
import {
  byRound,
  machine,
  median,
  type RowSummary,
  ratioRange,
  summarize,
  tableLines,
} from "../stats.js";
import type { DrainArgs } from "./drainArgs.js";
import { type PeakColumns, type PeakRatio, PeakTable, peakRssBound } from "./peakTable.js";
import { runApart } from "./rowProcess.js";

/**
 * A full app's row, the raw loop it is held against, the least rate ratio its target allows
 * (none: the ratio is reported only), and whether its peak is held to the bound (default: the
 * bench's `against.bounded`; `false` for a pair against another framework in a bench of raw loops).
 */
export type AppAgainstRaw = readonly [
  app: string,
  raw: string,
  target?: number | undefined,
  bounded?: boolean,
];

export interface DrainBench<Trial> {
  /** What the bench prints first. */
  readonly title: string;
  readonly scenario: string;
  /** The command line: the count, the rounds, the rows, the results' file and the command. */
  readonly args: DrainArgs;
  /** The row module (its `runRow(key, trial)`), as a file URL. */
  readonly rowModule: string;
  /** A row's printed name by its key (throws for a key the module does not know). */
  rowName(key: string): string;
  readonly pairs: readonly AppAgainstRaw[];
  /**
   * What the pairs are, printed above their ratios (default: each full app over its raw loop, its
   * peak resident set held to issue 26's bound). `bounded: false` for rows held against another
   * framework, whose peak is reported only.
   */
  readonly against?: { readonly heading: string; readonly bounded: boolean };
  /** A fresh trial for row `key` holding `messages` orders (filled, untimed). */
  fresh(key: string, messages: number): Promise<Trial>;
  /** After the row's process exited: throws unless the trial is drained and settled; cleans up. */
  finish(where: string, trial: Trial): Promise<void>;
  /** More facts for the results JSON (versions, settings). */
  readonly facts: Readonly<Record<string, unknown>>;
}

export interface DrainRowSummary extends RowSummary, PeakColumns {
  readonly key: string;
  readonly seconds: number[];
  readonly cpuUsPerOrder: number[];
}

export interface DrainRatio extends PeakRatio {
  /** App over raw at the medians. */
  readonly rate: number;
  /** Each round's app over the same round's raw loop. */
  readonly rateByRound: number[];
  /** The raw loop's CPU per order over the app's, at the medians (above 1: the app spends less). */
  readonly cpu: number;
  readonly target?: number;
  readonly met?: boolean;
}

const push = (map: Map<string, number[]>, key: string, value: number) =>
  map.set(key, [...(map.get(key) ?? []), value]);

/** Orders in each row's untimed warm-up drain (fewer when the timed drain is smaller). */
const warmCount = 20_000;

export async function runDrainBench<Trial>(bench: DrainBench<Trial>): Promise<void> {
  const { count, rounds, chosen: keys, file, command } = bench.args;
  const names = new Map(keys.map((key) => [key, bench.rowName(key)]));
  const bounded = bench.against?.bounded ?? true;
  const warmOrders = Math.min(count, warmCount);
  const rates = new Map<string, number[]>();
  const durations = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  const peaks = new PeakTable();
  const loadBefore = loadavg();
  const began = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(i + round) % keys.length]!;
      const warm = await bench.fresh(key, warmOrders);
      const timed = await bench.fresh(key, count);
      const apart = await runApart<Drained>({ module: bench.rowModule, key, warm, timed });
      const drained = apart.measured;
      const where = `${names.get(key)} (round ${round + 1})`;
      if (drained.messages !== count) {
        throw new Error(`${where}: ${drained.messages} of ${count}`);
      }
      if (drained.idSum !== idSum(count)) {
        throw new Error(`${where}: ids summed to ${drained.idSum}, not ${idSum(count)}`);
      }
      await bench.finish(`${where}, warm-up`, warm);
      await bench.finish(where, timed);
      push(rates, key, (drained.messages / drained.ms) * 1000);
      push(durations, key, drained.ms / 1000);
      push(cpu, key, (drained.cpuMs * 1000) / count);
      peaks.add(key, apart.memory);
    }
    process.stderr.write(`round ${round + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`);
  }
  const wallSeconds = (performance.now() - began) / 1000;
  const loadAfter = loadavg();

  const summaries: DrainRowSummary[] = keys.map((key) => ({
    ...summarize(names.get(key)!, rates.get(key)!),
    key,
    seconds: durations.get(key)!,
    cpuUsPerOrder: cpu.get(key)!,
    ...peaks.columns(key),
  }));
  const byKey = new Map(summaries.map((s) => [s.key, s]));
  const ratios: DrainRatio[] = [];
  for (const [app, raw, target, pairBounded] of bench.pairs) {
    const a = byKey.get(app);
    const b = byKey.get(raw);
    const peak = peaks.ratio(app, raw, pairBounded ?? bounded);
    if (a === undefined || b === undefined || peak === undefined) continue;
    const rate = a.median / b.median;
    ratios.push({
      ...peak,
      rate,
      rateByRound: byRound(a.rates, b.rates),
      cpu: median(b.cpuUsPerOrder) / median(a.cpuUsPerOrder),
      ...(target === undefined ? {} : { target, met: rate >= target }),
    });
  }

  const fmt = (rate: number) => `${(rate / 1e3).toFixed(1)} k/s`;
  console.log(`${bench.title}, ${count} per row, ${rounds} interleaved rounds`);
  for (const line of tableLines(summaries, fmt)) console.log(line);
  console.log("CPU per order, median (the row's process):");
  for (const s of summaries) console.log(`  ${s.name}: ${median(s.cpuUsPerOrder).toFixed(2)} µs`);
  const heldToBound = ratios.filter((r) => r.withinBound !== undefined);
  for (const line of peaks.lines(summaries, heldToBound)) console.log(line);
  console.log(
    `${bench.against?.heading ?? "full app / raw loop"} (rate at the medians; by round; CPU per order, the second's / the first's):`,
  );
  for (const r of ratios) {
    const verdict =
      r.target === undefined ? "" : ` (target >= ${r.target}: ${r.met ? "met" : "missed"})`;
    const over = r.withinBound === false ? ` (over ${peakRssBound})` : "";
    console.log(
      `  ${names.get(r.row)} / ${names.get(r.against)}: ${r.rate.toFixed(3)}${verdict}; by round ${ratioRange(r.rateByRound, 3)}; CPU ${r.cpu.toFixed(3)}; peak RSS ${r.peakRss.toFixed(2)}${over}`,
    );
  }
  console.log(
    `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, after ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
  );
  writeFileSync(
    new URL(`../../results/${file}`, import.meta.url),
    `${JSON.stringify(
      {
        scenario: bench.scenario,
        command,
        date: new Date().toISOString(),
        machine: machine(),
        load: { before: loadBefore, after: loadAfter },
        ...bench.facts,
        count: count,
        rounds: rounds,
        warmCount: warmOrders,
        wallSeconds,
        rows: summaries,
        ratios,
      },
      null,
      2,
    )}\n`,
  );
  console.log(
    `\nresults written to tooling/bench/results/${file} (${wallSeconds.toFixed(0)} s of rounds)`,
  );
}

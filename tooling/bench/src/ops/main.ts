// What the operations packages cost on the in-process benchmark: the full app on the memory broker,
// bare, with each package loaded but off, and on. Every row runs in a fresh process per round (so
// "loaded, off" differs from "bare" only in what it loads), rows interleaved and their order turned
// each round, so drift in the machine falls on every row alike.
//
//   [OTEL_AT=<ref>] pnpm --filter @ruststream/tooling-bench bench:ops [messages-per-round] [rounds] [only] [file]
//
// `only` keeps the rows whose name contains it, or any of a comma list (and the bare row):
// "metrics", "tracing", "tracing on,floor"; `file` names the results under results/ (default
// ops.json, or ops-<only>.json).
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { runApart } from "../rows/rowProcess.js";
import { machine, type RowSummary, summarize, tableLines } from "../stats.js";
import { costRatioLine, costRatios } from "./costRatio.js";
import { opsRows as allRows } from "./rows.js";
import type { OpsRates } from "./runRow.js";
import { otelAt } from "./tracing.js";

const messages = Number(process.argv[2] ?? 300_000);
const rounds = Number(process.argv[3] ?? 7);
const only = process.argv[4] === "" ? undefined : process.argv[4];
const fileArg = process.argv[5];
const opsRows = allRows.filter(
  (row, i) =>
    i === 0 || only === undefined || only.split(",").some((part) => row.name.includes(part)),
);

const rowModule = new URL("./runRow.ts", import.meta.url).href;

/** One row in a fresh process (runRow.ts warms each path itself: the job has no warm-up input). */
async function runRow(name: string): Promise<OpsRates> {
  return (await runApart<OpsRates>({ module: rowModule, key: name, timed: messages })).measured;
}

const loadBefore = loadavg();
const rates = new Map(
  opsRows.map((row) => [row.name, { ack: [] as number[], reply: [] as number[] }]),
);
for (let round = 0; round < rounds; round++) {
  const turn = round % opsRows.length;
  const order = [...opsRows.slice(turn), ...opsRows.slice(0, turn)];
  for (const row of order) {
    const r = await runRow(row.name);
    rates.get(row.name)!.ack.push(r.ack);
    rates.get(row.name)!.reply.push(r.reply);
  }
  process.stderr.write(`round ${round + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`);
}

const summary: RowSummary[] = [];
for (const path of ["ack", "reply"] as const) {
  for (const row of opsRows)
    summary.push(summarize(`${row.name}, ${path}`, rates.get(row.name)![path]));
}
const fmt = (rate: number) => `${(rate / 1e6).toFixed(3)} M/s`;
console.log(
  `operations cost, full app in process, ${messages} messages per round, ${rounds} interleaved rounds, messages per CPU second`,
);
for (const line of tableLines(summary, fmt)) console.log(line);

/** Each row's median over the bare row's, per path; and the same over rounds paired in time. */
const ratios: Record<string, { median: number; pairedMedian: number }> = {};
for (const path of ["ack", "reply"] as const) {
  const bare = rates.get("bare")![path];
  const bareMedian = summary.find((s) => s.name === `bare, ${path}`)!.median;
  for (const row of opsRows.slice(1)) {
    const own = rates.get(row.name)![path];
    const paired = own.map((rate, i) => rate / bare[i]!).sort((a, b) => a - b);
    const mid = paired.length >> 1;
    const pairedMedian =
      paired.length % 2 === 1 ? paired[mid]! : (paired[mid - 1]! + paired[mid]!) / 2;
    const median = summary.find((s) => s.name === `${row.name}, ${path}`)!.median / bareMedian;
    ratios[`${row.name}, ${path}`] = { median, pairedMedian };
    console.log(
      `${row.name}, ${path}: ${(median * 100).toFixed(1)}% of bare at the medians, ${(pairedMedian * 100).toFixed(1)}% over rounds paired`,
    );
  }
}

const against = costRatios(opsRows, rates);
for (const r of against) console.log(costRatioLine(r));
const loadAfter = loadavg();
console.log(
  `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, after ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
);

const result = {
  scenario:
    "operations cost: the full app on the memory broker, bare and with each operations package",
  command: `${otelAt === undefined ? "" : `OTEL_AT=${otelAt} `}pnpm --filter @ruststream/tooling-bench bench:ops ${messages} ${rounds}${only === undefined ? "" : ` ${only}`}${fileArg === undefined ? "" : ` ${fileArg}`}`,
  date: new Date().toISOString(),
  machine: machine(),
  load: { before: loadBefore, after: loadAfter },
  messagesPerRound: messages,
  rounds,
  rows: summary,
  ratios,
  against,
};
const file = fileArg ?? (only === undefined ? "ops.json" : `ops-${only}.json`);
writeFileSync(
  new URL(`../../results/${file}`, import.meta.url),
  `${JSON.stringify(result, null, 2)}\n`,
);
console.log(`results written to tooling/bench/results/${file}`);

// What the operations packages cost on the in-process benchmark: the full app on the memory broker,
// bare, with each package loaded but off, and on. Every row runs in a fresh process per round (so
// "loaded, off" differs from "bare" only in what it loads), rows interleaved and their order turned
// each round, so drift in the machine falls on every row alike.
//
//   pnpm --filter @ruststream/tooling-bench bench:ops [messages-per-round] [rounds] [only]
//
// `only` keeps the rows whose name contains it (and the bare row): "metrics", "tracing".
import { writeFileSync } from "node:fs";
import { runApart } from "../rows/rowProcess.js";
import { machine, type RowSummary, summarize, tableLines } from "../stats.js";
import { opsRows as allRows } from "./rows.js";
import type { OpsRates } from "./runRow.js";

const messages = Number(process.argv[2] ?? 300_000);
const rounds = Number(process.argv[3] ?? 7);
const only = process.argv[4];
const opsRows = allRows.filter(
  (row, i) => i === 0 || only === undefined || row.name.includes(only),
);

const rowModule = new URL("./runRow.ts", import.meta.url).href;

/** One row in a fresh process (runRow.ts warms each path itself: the job has no warm-up input). */
async function runRow(name: string): Promise<OpsRates> {
  return (await runApart<OpsRates>({ module: rowModule, key: name, timed: messages })).measured;
}

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
  process.stderr.write(`round ${round + 1}/${rounds} done\n`);
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

const result = {
  scenario:
    "operations cost: the full app on the memory broker, bare and with each operations package",
  command: `pnpm --filter @ruststream/tooling-bench bench:ops ${messages} ${rounds}${only === undefined ? "" : ` ${only}`}`,
  date: new Date().toISOString(),
  machine: machine(),
  messagesPerRound: messages,
  rounds,
  rows: summary,
  ratios,
};
const file = only === undefined ? "ops.json" : `ops-${only}.json`;
writeFileSync(
  new URL(`../../results/${file}`, import.meta.url),
  `${JSON.stringify(result, null, 2)}\n`,
);
console.log(`results written to tooling/bench/results/${file}`);

// The in-process dispatch cost: the full app on the memory broker against a bare loop over an array of
// the same deliveries doing the same decode and settle. Rounds interleave the rows so drift in the
// machine (thermal, GC, other load) hits every row alike.
//
//   pnpm --filter @ruststream/tooling-bench bench [messages-per-round] [rounds] [wall|cpu]
//
// `cpu` times every row in the process's CPU time (user and system, GC threads included) instead of
// wall time: on a shared machine wall time measures the neighbours as much as the row.
import { writeFileSync } from "node:fs";
import * as core from "@ruststream/core";
import { benchClock } from "./benchClock.js";
import { bareLoop, fullApp, orderPayloads } from "./inProcessApp.js";
import { machine, summarize, tableLines } from "./stats.js";

const messages = Number(process.argv[2] ?? 300_000);
const rounds = Number(process.argv[3] ?? 7);
const clock = benchClock(process.argv[4]);
const now = clock.now;

const payloads = orderPayloads(core, messages);
interface Row {
  readonly name: string;
  readonly run: () => Promise<number>;
  readonly rates: number[];
}

const rows: Row[] = [
  { name: "full app, ack", run: () => fullApp(core, payloads, false, undefined, now), rates: [] },
  { name: "bare loop, ack", run: () => bareLoop(core, payloads, false, now), rates: [] },
  { name: "full app, reply", run: () => fullApp(core, payloads, true, undefined, now), rates: [] },
  { name: "bare loop, reply", run: () => bareLoop(core, payloads, true, now), rates: [] },
];

const fmt = (rate: number) => `${(rate / 1e6).toFixed(3)} M/s`;

// One untimed round so the JIT has seen every path.
for (const row of rows) await row.run();
for (let round = 0; round < rounds; round++) {
  for (const row of rows) row.rates.push(await row.run());
  process.stderr.write(`round ${round + 1}/${rounds} done\n`);
}

const summary = rows.map((row) => summarize(row.name, row.rates));

console.log(
  `in-process dispatch, ${messages} messages per round, ${rounds} interleaved rounds, ${clock.name} time`,
);
for (const line of tableLines(summary, fmt)) console.log(line);
const ratio = (full: string, bare: string) =>
  summary.find((r) => r.name === full)!.median / summary.find((r) => r.name === bare)!.median;
const ratios = {
  ack: ratio("full app, ack", "bare loop, ack"),
  reply: ratio("full app, reply", "bare loop, reply"),
};
console.log(
  `ratio full/bare (medians): ack ${(ratios.ack * 100).toFixed(0)}%, reply ${(ratios.reply * 100).toFixed(0)}% (target: reply 80%)`,
);

const result = {
  scenario:
    "in-process dispatch: full app on the memory broker vs a bare loop over the same deliveries",
  command: `pnpm --filter @ruststream/tooling-bench bench ${messages} ${rounds} ${clock.name}`,
  clock: clock.name,
  date: new Date().toISOString(),
  machine: machine(),
  messagesPerRound: messages,
  rounds,
  rows: summary,
  ratios,
};
const file = new URL("../results/in-process.json", import.meta.url);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`results written to tooling/bench/results/in-process.json`);

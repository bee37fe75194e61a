// The Kafka targets over several runs at once, round by round: each round's full app against the raw
// loop of the same round (the two ran a few seconds apart), every round of every file pooled. On
// this 2-core machine a round may run some 40% slower for every row alike (the broker's JVM and the
// machine's other work share the cores), so the ratio of two rows' medians moves with which rows
// those rounds hit; a ratio taken within each round cancels it.
//
//   node --import tsx src/kafka/pooled.ts results/kafka.json results/history/2026-12-04-kafka-now.json ...
import { readFileSync } from "node:fs";
import { byRound, median, ratioRange } from "../stats.js";
import { ratioPairs } from "./targets.js";

interface ResultRow {
  readonly key: string;
  readonly rates: readonly number[];
  readonly cpuUsPerOrder: readonly number[];
}
interface ResultFile {
  readonly command: string;
  readonly rows: readonly ResultRow[];
}

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("name one or more results/kafka*.json files");
const pooled = new Map<string, { rate: number[]; cpu: number[] }>();
for (const path of files) {
  const result = JSON.parse(readFileSync(path, "utf8")) as ResultFile;
  const rows = new Map(result.rows.map((r) => [r.key, r]));
  console.log(`${path}: ${result.command}`);
  for (const [row, against] of ratioPairs) {
    const a = rows.get(row);
    const b = rows.get(against);
    if (a === undefined || b === undefined) continue;
    const entry = pooled.get(`${row}/${against}`) ?? { rate: [], cpu: [] };
    entry.rate.push(...byRound(a.rates, b.rates));
    entry.cpu.push(...byRound(b.cpuUsPerOrder, a.cpuUsPerOrder));
    pooled.set(`${row}/${against}`, entry);
  }
}
console.log("round by round, every file pooled (rate; raw CPU per order / row's):");
for (const [row, against, target] of ratioPairs) {
  const entry = pooled.get(`${row}/${against}`);
  if (entry === undefined) continue;
  const rate = median(entry.rate);
  const cpu = median(entry.cpu);
  const verdict =
    target === undefined ? "" : ` (target >= ${target}: ${rate >= target ? "met" : "missed"})`;
  console.log(
    `  ${row} / ${against}: ${ratioRange(entry.rate, 3)} over ${entry.rate.length} rounds; CPU ${cpu.toFixed(3)}${verdict}`,
  );
}

// Each publish row against each baseline of its broker, round by round: a round's row over the
// baseline of the same round (the two ran seconds apart), the median over the rounds, beside the
// ratio of the CPU per message. On this 2-core machine a round can run a third slower for every row
// alike; a ratio taken within each round cancels that, where the ratio of two medians does not.
//
//   node --import tsx src/publish/byRound.ts results/publish.json [more files]
import { readFileSync } from "node:fs";
import { byRound, median, ratioRange } from "../stats.js";

interface ResultRow {
  readonly name: string;
  readonly baseline?: boolean;
  readonly rates: readonly number[];
  readonly cpuUsPerMessage: readonly number[];
}
interface ResultFile {
  readonly command: string;
  readonly brokers: readonly { readonly broker: string; readonly rows: readonly ResultRow[] }[];
}

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("name one or more results/publish*.json files");
for (const path of files) {
  const result = JSON.parse(readFileSync(path, "utf8")) as ResultFile;
  console.log(`${path}: ${result.command}`);
  for (const { broker, rows } of result.brokers) {
    const baselines = rows.filter((r) => r.baseline === true);
    for (const row of rows.filter((r) => r.baseline !== true)) {
      for (const base of baselines) {
        const rate = byRound(row.rates, base.rates);
        const cpu = byRound(base.cpuUsPerMessage, row.cpuUsPerMessage);
        console.log(
          `  ${broker}: ${row.name} / ${base.name}: ${ratioRange(rate)} by round; CPU ${median(cpu).toFixed(2)}`,
        );
      }
    }
  }
}

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runLong } from "./long.js";
import { machineCpus, type RunReport, writeReport } from "./report.js";
import { fuzzSeed } from "./seed.js";
import { targets } from "./targets/index.js";

// `pnpm fuzz [--long] [--runs n] [--seed s] [--target name ...] [--out dir]`: every target (or the
// named ones) on its corpus and `runs` generated inputs (a million with --long, 10,000 without), in
// worker threads watched for hangs, then a report in Markdown and JSON (reports/ by default).

const { values } = parseArgs({
  options: {
    long: { type: "boolean", default: false },
    runs: { type: "string" },
    seed: { type: "string" },
    target: { type: "string", multiple: true },
    out: { type: "string" },
  },
});

const runs = values.runs !== undefined ? Number(values.runs) : values.long ? 1_000_000 : 10_000;
if (!Number.isSafeInteger(runs) || runs < 0)
  throw new Error(`--runs ${values.runs}: give a whole number`);
const seed = fuzzSeed(values.seed);
const chosen = values.target ?? targets.map((t) => t.name);
const unknown = chosen.filter((name) => !targets.some((t) => t.name === name));
if (unknown.length > 0) {
  throw new Error(
    `no fuzz target ${unknown.join(", ")}: the targets are ${targets.map((t) => t.name).join(", ")}`,
  );
}
const out = values.out ?? join(fileURLToPath(new URL("..", import.meta.url)), "reports");

const report: RunReport = {
  seed,
  perTarget: runs,
  node: process.versions.node,
  cpus: machineCpus(),
  startedAt: new Date().toISOString(),
  tallies: [],
};
let failed = false;
for (const target of targets.filter((t) => chosen.includes(t.name))) {
  process.stdout.write(
    `${target.name}: corpus and ${runs.toLocaleString("en")} inputs (seed ${seed}) ...\n`,
  );
  const started = Date.now();
  const tally = await runLong(target, seed, runs, (next) => {
    if (next % 100_000 === 0) {
      const rate = next / ((Date.now() - started) / 1000);
      process.stdout.write(
        `${target.name}: ${next.toLocaleString("en")} inputs, ${rate.toFixed(0)} a second\n`,
      );
    }
  });
  (report.tallies as (typeof tally)[]).push(tally);
  const found = Object.values(tally.found).reduce((a, b) => a + b, 0);
  failed ||= found > 0;
  process.stdout.write(
    `${target.name}: ${tally.inputs.toLocaleString("en")} inputs in ${(tally.elapsedMs / 1000).toFixed(0)} s; ${JSON.stringify(tally.outcomes)}; findings ${JSON.stringify(tally.found)}\n`,
  );
  // Written after each target, so a long run stopped part way still leaves what it did.
  writeReport(out, report);
}
process.stdout.write(`report: ${writeReport(out, report).join(", ")}\n`);
process.exitCode = failed ? 1 : 0;

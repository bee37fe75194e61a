// The full app on this tree's core beside the same app on core as it was at an earlier commit, rows
// interleaved in one run: how a change to the runtime is shown to be no slower.
//
//   pnpm --filter @ruststream/tooling-bench bench:against <git-ref> [messages-per-round] [rounds] [wall|cpu]
//
// The earlier core is `packages/core` exported from git into .cache/bench-core/<commit>/ (outside the
// source tree, reused by later runs) and loaded from its TypeScript source, as this tree's is.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as current from "@ruststream/core";
import { benchClock } from "./benchClock.js";
import { type CoreModule, fullApp, orderPayloads } from "./inProcessApp.js";
import { machine, summarize, tableLines } from "./stats.js";

const ref = process.argv[2];
if (ref === undefined) {
  console.error("usage: bench:against <git-ref> [messages-per-round] [rounds] [wall|cpu]");
  process.exit(2);
}
const messages = Number(process.argv[3] ?? 300_000);
const rounds = Number(process.argv[4] ?? 7);
const clock = benchClock(process.argv[5]);

const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();
const top = git("rev-parse", "--show-toplevel");
const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
const dir = join(top, ".cache", "bench-core", commit);
if (!existsSync(join(dir, "packages", "core", "src", "index.ts"))) {
  mkdirSync(dir, { recursive: true });
  // git archive | tar: the tree at that commit, without touching the work tree.
  execFileSync("sh", ["-c", `git archive ${commit} packages/core | tar -x -C '${dir}'`], {
    cwd: top,
  });
}
const earlier = (await import(
  pathToFileURL(join(dir, "packages", "core", "src", "index.ts")).href
)) as CoreModule;

interface Row {
  readonly name: string;
  readonly run: () => Promise<number>;
  readonly rates: number[];
}

const short = commit.slice(0, 7);
const payloads = orderPayloads(current, messages);
const rows: Row[] = [
  {
    name: `full app, ack (${short})`,
    run: () => fullApp(earlier, payloads, false, undefined, clock.now),
    rates: [],
  },
  {
    name: "full app, ack (this tree)",
    run: () => fullApp(current, payloads, false, undefined, clock.now),
    rates: [],
  },
  {
    name: `full app, reply (${short})`,
    run: () => fullApp(earlier, payloads, true, undefined, clock.now),
    rates: [],
  },
  {
    name: "full app, reply (this tree)",
    run: () => fullApp(current, payloads, true, undefined, clock.now),
    rates: [],
  },
];

const fmt = (rate: number) => `${(rate / 1e6).toFixed(3)} M/s`;

// One untimed round so the JIT has seen every path of both.
for (const row of rows) await row.run();
for (let round = 0; round < rounds; round++) {
  for (const row of rows) row.rates.push(await row.run());
  process.stderr.write(`round ${round + 1}/${rounds} done\n`);
}

const summary = rows.map((row) => summarize(row.name, row.rates));
console.log(
  `in-process dispatch against ${short}, ${messages} messages per round, ${rounds} interleaved rounds, ${clock.name} time`,
);
for (const line of tableLines(summary, fmt)) console.log(line);
const ratio = (i: number) => summary[i + 1]!.median / summary[i]!.median;
const ratios = { ack: ratio(0), reply: ratio(2) };
console.log(
  `this tree / ${short} (medians): ack ${(ratios.ack * 100).toFixed(0)}%, reply ${(ratios.reply * 100).toFixed(0)}%`,
);
const result = {
  scenario: `in-process dispatch: full app on this tree's core vs core at ${commit}`,
  command: `pnpm --filter @ruststream/tooling-bench bench:against ${ref} ${messages} ${rounds} ${clock.name}`,
  clock: clock.name,
  date: new Date().toISOString(),
  head: git("rev-parse", "HEAD"),
  against: commit,
  machine: machine(),
  messagesPerRound: messages,
  rounds,
  rows: summary,
  ratios,
};
const file = new URL("../results/in-process-against.json", import.meta.url);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log("results written to tooling/bench/results/in-process-against.json");

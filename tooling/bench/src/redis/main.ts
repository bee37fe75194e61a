// Redis consumers, raw ioredis against the broker alone against the full app, for streams, reliable
// lists and pub/sub, on one server with the same 512-byte payloads and message counts. The load
// generator runs in its own process. Rounds interleave every row, so drift in the machine (other
// engineers' test runs, thermal, GC) hits every row alike.
//
//   pnpm --filter @ruststream/tooling-bench bench:redis [seconds-per-row] [rounds] [modes]
//
// REDIS_URL picks the server; without it tooling/brokers starts its plain instance. With
// REDIS_CLUSTER_NODES (and REDIS_CLUSTER_PASSWORD; `pnpm brokers env redis-cluster` prints both)
// it runs on that Redis Cluster instead, streams only.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { machine, type RowSummary, summarize, tableLines } from "../stats.js";
import { GeneratorProcess } from "./generatorProcess.js";
import {
  isModeName,
  type Mode,
  modes,
  publishWindow,
  type VariantName,
  variantNames,
} from "./modes.js";
import { payloadBytes } from "./payload.js";
import { clusterTarget, openRaw, serverTarget, type Target, whereOf } from "./target.js";
import type { Measured, Trial } from "./trial.js";

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 5);
const modeArg = process.argv[4] ?? "stream,list,pubsub";
const chosen = modeArg.split(",").map((name) => {
  if (!isModeName(name)) throw new Error(`unknown mode "${name}": stream, list or pubsub`);
  return modes[name];
});
// The warm-up round's size: enough for the JIT to see every path, and to size the rounds by.
const warmCount = 20_000;
const group = "bench";

const target: Target = clusterTarget() ?? (await serverFromEnv());
if (target.kind === "cluster" && chosen.some((mode) => mode.name !== "stream")) {
  throw new Error(
    "on a cluster the benchmark runs streams only (its lists and Pub/Sub rows are written for one server): pass `stream` as the modes",
  );
}

async function serverFromEnv(): Promise<Target> {
  if (process.env.REDIS_URL === undefined) await ensureBrokers(["redis"]);
  const url = process.env.REDIS_URL;
  if (url === undefined) {
    throw new Error(
      "no Redis server: set REDIS_URL, or start tooling/brokers (node tooling/brokers/src/cli.mjs up redis)",
    );
  }
  return serverTarget(url);
}

// Taken before the rounds: another engineer may commit while they run.
const source = sourceRevision();
const admin = await openRaw(target, "admin");
const serverVersion = /redis_version:([^\r\n]+)/.exec(await admin.info("server"))?.[1] ?? "unknown";
const generator = await GeneratorProcess.start(target);
let trials = 0;

/** One row over a fresh key: fill (untimed), consume (timed), check, clean up. */
async function runRow(mode: Mode, variant: VariantName, count: number): Promise<Measured> {
  const key = `bench:${mode.name}:${process.pid}:${trials++}`;
  await mode.fill?.(generator, key, count);
  const trial: Trial =
    mode.fill === undefined
      ? {
          target,
          key,
          group,
          count,
          publish: () =>
            generator.run({ kind: "publish", channel: key, count, window: publishWindow }),
          progress: (received) => generator.credit(received),
        }
      : { target, key, group, count };
  const measured = await mode.consumers[variant](trial);
  if (measured.bytes !== count * payloadBytes) {
    throw new Error(
      `${mode.name} / ${variant}: saw ${measured.bytes} payload bytes, not ${count * payloadBytes}`,
    );
  }
  await checkSettled(mode, key);
  // One key at a time: on a cluster they may live on different nodes.
  for (const k of [key, `${key}.processing`, `${key}.delayed`, `${key}.recovery`])
    await admin.del(k);
  return measured;
}

/** Everything the row took was acknowledged: nothing pending in the group, nothing in processing. */
async function checkSettled(mode: Mode, key: string): Promise<void> {
  if (mode.name === "stream") {
    const [pending] = (await admin.xpending(key, group)) as [number];
    if (pending !== 0) throw new Error(`stream ${key}: ${pending} entries left pending`);
  } else if (mode.name === "list") {
    const left = (await admin.llen(key)) + (await admin.llen(`${key}.processing`));
    if (left !== 0) throw new Error(`list ${key}: ${left} values left`);
  }
}

const rateOf = (count: number, m: Measured) => (count / m.ms) * 1000;

// Untimed warm-up of every row, then a sizing run of the raw loop about a second long (the 20 000
// warm-up messages are too few to time: connection and group setup weigh on them). Each row gets
// the raw loop's rate times the seconds asked for, with a margin, so even the fastest row lasts
// that long.
const counts = new Map<Mode, number>();
for (const mode of chosen) {
  for (const variant of variantNames) await runRow(mode, variant, warmCount);
  let rate = rateOf(warmCount, await runRow(mode, "raw ioredis", warmCount));
  const sizing = Math.max(warmCount, Math.round(rate / 1000) * 1000);
  rate = rateOf(sizing, await runRow(mode, "raw ioredis", sizing));
  counts.set(mode, Math.max(warmCount, Math.round((rate * seconds * 1.25) / 1000) * 1000));
  process.stderr.write(`warm-up ${mode.name}: ${counts.get(mode)} messages per row\n`);
}

const rates = new Map<string, number[]>();
const durations = new Map<string, number[]>();
const rowName = (mode: Mode, variant: VariantName) => `${mode.name}: ${variant}`;
const began = performance.now();
for (let round = 0; round < rounds; round++) {
  for (const mode of chosen) {
    const count = counts.get(mode)!;
    // The order of the rows turns each round, so none always runs first after a fill.
    for (let i = 0; i < variantNames.length; i++) {
      const variant = variantNames[(i + round) % variantNames.length]!;
      const measured = await runRow(mode, variant, count);
      const name = rowName(mode, variant);
      rates.set(name, [...(rates.get(name) ?? []), rateOf(count, measured)]);
      durations.set(name, [...(durations.get(name) ?? []), measured.ms / 1000]);
    }
  }
  process.stderr.write(`round ${round + 1}/${rounds} done\n`);
}
const wallSeconds = (performance.now() - began) / 1000;
generator.stop();
admin.disconnect();

const fmt = (rate: number) => `${(rate / 1e3).toFixed(1)} k/s`;
const results = chosen.map((mode) => {
  const rows = variantNames.map((variant) => {
    const name = rowName(mode, variant);
    return { ...summarize(name, rates.get(name)!), seconds: durations.get(name)! };
  });
  const raw = rows[0]!;
  const broker = rows[1]!;
  const app = rows[2]!;
  const ratio = { brokerToRaw: broker.median / raw.median, appToRaw: app.median / raw.median };
  return {
    mode: mode.name,
    label: mode.label,
    count: counts.get(mode)!,
    rows,
    ratio,
    verdict: verdictOf(raw, app),
  };
});

/** The commit measured, and whether packages/ had uncommitted changes (others work in this tree). */
function sourceRevision(): { commit: string; packagesDirty: boolean } {
  const root = new URL("../../../../", import.meta.url).pathname;
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", root, ...args], { encoding: "utf8" }).trim();
  try {
    return {
      commit: git("rev-parse", "HEAD"),
      packagesDirty: git("status", "--porcelain", "--", "packages").length > 0,
    };
  } catch {
    return { commit: "unknown", packagesDirty: true };
  }
}

/**
 * The target: the app's median within the raw loop's spread (at least its worst round) and never
 * below 0.9 of the raw median. A row with a spread over 10% makes the comparison inconclusive.
 */
function verdictOf(raw: RowSummary, app: RowSummary): string {
  const ratio = app.median / raw.median;
  if (ratio < 0.9) return `below 0.9 of the raw loop (${ratio.toFixed(2)})`;
  if (raw.inconclusive || app.inconclusive) return "inconclusive (a spread over 10%)";
  return app.median >= raw.worst ? "within the raw loop's spread" : "outside the raw loop's spread";
}

console.log(
  `Redis ${serverVersion}, ${payloadBytes}-byte payloads, ${rounds} interleaved rounds, ~${seconds} s per row`,
);
for (const r of results) {
  console.log(`\n${r.label}: ${r.count} messages per row`);
  for (const line of tableLines(r.rows, fmt)) console.log(line);
  console.log(
    `median ratio: broker alone/raw ${r.ratio.brokerToRaw.toFixed(2)}, full app/raw ${r.ratio.appToRaw.toFixed(2)}: ${r.verdict}`,
  );
  const lengths = r.rows.map(
    (row) => `${Math.min(...row.seconds).toFixed(1)}-${Math.max(...row.seconds).toFixed(1)} s`,
  );
  console.log(`seconds per row (raw, broker, app): ${lengths.join(", ")}`);
}

const full = seconds >= 5 && rounds >= 5;
const command = `${target.kind === "cluster" ? "REDIS_CLUSTER_NODES=... REDIS_CLUSTER_PASSWORD=... " : ""}pnpm --filter @ruststream/tooling-bench bench:redis ${seconds} ${rounds}${process.argv[4] === undefined ? "" : ` ${modeArg}`}`;
const file = `results/${target.kind === "cluster" ? "redis-cluster" : "redis"}${full ? "" : "-quick"}.json`;
writeFileSync(
  new URL(`../../${file}`, import.meta.url),
  `${JSON.stringify(
    {
      scenario:
        "Redis consumers: raw ioredis loop vs the @ruststream/redis broker alone vs the full app, per transport",
      command,
      date: new Date().toISOString(),
      // Host and port only: a URL may carry a password.
      machine: { ...machine(), redis: serverVersion, server: whereOf(target) },
      source,
      payloadBytes,
      secondsPerRow: seconds,
      rounds,
      wallSeconds,
      modes: results,
    },
    null,
    2,
  )}\n`,
);
console.log(`\nresults written to tooling/bench/${file} (${wallSeconds.toFixed(0)} s of rounds)`);

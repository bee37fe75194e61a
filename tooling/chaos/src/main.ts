// `pnpm chaos`: runs the scenarios of a profile (or those named), writes the report under
// results/, prints the table, and exits 1 if any scenario lost, reordered, over-duplicated or
// dead-lettered twice.
import { randomInt } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { brokers } from "@ruststream/tooling-testkit";
import { parseArgs } from "./args.js";
import { timelineSvg } from "./chart.js";
import { writeChartPng } from "./chartPng.js";
import { Toxiproxy } from "./faults/toxiproxy.js";
import { type RunReport, reportTable, type ScenarioReport } from "./report.js";
import { scenarios } from "./scenarios/catalog.js";
import { runScenario } from "./scenarios/runScenario.js";
import type { Scenario } from "./scenarios/scenario.js";

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
const args = parseArgs(process.argv.slice(2), () => randomInt(0, 0xffffffff));
const unknown = args.scenarios.filter((name) => !scenarios.some((s) => s.name === name));
if (unknown.length > 0) {
  throw new Error(
    `unknown scenario ${unknown.join(", ")}: one of ${scenarios.map((s) => s.name).join(", ")}`,
  );
}
const chosen =
  args.scenarios.length > 0
    ? scenarios.filter((s) => args.scenarios.includes(s.name))
    : scenarios.filter((s) => args.profile.name === "long" || s.ci === true);
for (const s of scenarios) {
  if (args.scenarios.length === 0 && !chosen.includes(s) && s.ci !== true) {
    log(`[chaos] ${s.name} left out of the ${args.profile.name} profile: ${s.ci}`);
  }
}

/**
 * What a scenario holds for its whole run. One that restarts the shared persistent Redis or the
 * Pulsar standalone has it to itself meanwhile, as one restarting PostgreSQL's restartable cluster
 * has that; one on the Kafka, NATS or RabbitMQ cluster, whose nodes it kills, has the cluster to
 * itself. The NATS one that restarts a server restarts one of its own, which nobody else uses.
 */
function lockOf(scenario: Scenario): <T>(run: () => Promise<T>) => Promise<T> {
  if (scenario.broker.startsWith("kafka-")) return brokers["kafka-cluster"].exclusive;
  if (scenario.broker === "nats-partitioned") return brokers["nats-cluster"].exclusive;
  if (scenario.broker.startsWith("rabbitmq-") && scenario.faults.includes("leader-kill")) {
    return brokers["rabbitmq-cluster"].exclusive;
  }
  if (!scenario.faults.includes("broker-restart") || scenario.broker === "nats-jetstream") {
    return (run) => run();
  }
  if (scenario.broker.startsWith("pulsar-")) return brokers.pulsar.exclusive;
  if (scenario.broker === "postgres-queue") return brokers.postgres.restartable.exclusive;
  return (run) => brokers.redis.exclusive("persistent", run);
}

const dir = fileURLToPath(new URL("../results/", import.meta.url));
const logDir = `${dir}logs`;
mkdirSync(logDir, { recursive: true });
let toxiproxy: Promise<Toxiproxy> | undefined;
const startedAt = new Date();
const runStart = performance.now();
const reports: ScenarioReport[] = [];
log(
  `[chaos] profile ${args.profile.name}, seed ${args.seed} (replay: pnpm chaos --profile ${args.profile.name} --seed ${args.seed})`,
);
try {
  for (const scenario of chosen) {
    const run = () =>
      runScenario(scenario, {
        profile: args.profile,
        runSeed: args.seed,
        toxiproxy: () => {
          toxiproxy ??= Toxiproxy.start(log);
          return toxiproxy;
        },
        log,
        logDir,
      });
    const report = await lockOf(scenario)(run);
    reports.push(report);
    log(
      `[chaos] ${scenario.name}: ${report.failures.length === 0 ? "pass" : report.failures.join("; ")}`,
    );
  }
} finally {
  if (toxiproxy !== undefined) (await toxiproxy).stop();
}

const run: RunReport = {
  profile: args.profile.name,
  seed: args.seed,
  startedAt: startedAt.toISOString(),
  wallMs: performance.now() - runStart,
  scenarios: reports,
};
// A run of named scenarios keeps its own report beside the whole profile's.
const named = args.scenarios.length > 0 ? `-${chosen.map((s) => s.name).join("+")}` : "";
const base = `${dir}${run.profile}-seed${run.seed}${named}`;
writeFileSync(`${base}.json`, `${JSON.stringify(run, null, 2)}\n`);
const text = reportTable(run);
writeFileSync(`${base}.txt`, text);
const svg = timelineSvg(run);
writeFileSync(`${base}.svg`, svg);
if (args.png) await writeChartPng(svg, `${base}.png`);
process.stdout.write(text);
log(`[chaos] report: ${base}.json, .txt and .svg${args.png ? " and .png" : ""}`);
process.exitCode = reports.every((r) => r.failures.length === 0) ? 0 : 1;

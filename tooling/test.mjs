#!/usr/bin/env node
// @ts-check
// `npm test`: everything the tests need, then the tests. On a machine with only Node and npm (as
// root, with apt-get) it installs the Debian packages, brings the pinned Node when the machine's is
// below the floor and pnpm at its pinned version, installs the workspace (librdkafka built from
// source against the system libraries), runs the whole suite, then the brokerless projects on every
// other maintained Node line, then some of those and every broker's live round trip on Bun and on Deno, and
// closes with the tally. Arguments go to the whole-suite vitest run
// (`npm test -- --project core`), which then runs alone.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildInterop } from "./setup/interop.mjs";
import { ensureNode, nodeEnv, nodeLines, projectNode } from "./setup/node.mjs";
import { pnpm, pnpmCommand } from "./setup/pnpm.mjs";
import { runtimeLines } from "./setup/runtimes.mjs";
import { say } from "./setup/step.mjs";
import { ensureSystem } from "./setup/system.mjs";
import { tally } from "./setup/tally.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const vitestArgs = process.argv.slice(2);
const interop = process.env.RUSTSTREAM_SKIP_INTEROP !== "1";
const reports = join(root, ".cache");
// Removed first, so a tally is only ever this run's, even when the set-up below fails.
rmSync(join(reports, "test-tally.txt"), { force: true });
mkdirSync(reports, { recursive: true });

ensureSystem({ interop });
const node = projectNode(root);
const project = { root, env: node.env, pnpm: pnpmCommand(root, node.env) };

say(
  "installing the workspace (the first time this builds librdkafka from source: about 2 minutes on 2 cores)",
);
pnpm(project, "installing the workspace", ["install", "--frozen-lockfile", "--prefer-offline"], {
  // librdkafka links the system's zlib, OpenSSL, zstd, lz4, SASL and curl instead of downloading
  // their sources, which fails on a machine that reaches only package registries.
  env: { ...node.env, CKJS_LINKING: "dynamic" },
  quiet: true,
  fix: "read the install's output above; a failed build of @confluentinc/kafka-javascript needs the system libraries this command names when they are missing (zlib1g-dev libssl-dev libzstd-dev liblz4-dev libsasl2-dev libcurl4-openssl-dev), a C++ toolchain and python3",
});
ensureAddon();
// The whole suite runs the interop suites; a run of a few projects builds only if one needs it.
if (interop && vitestArgs.length === 0) buildInterop(root);

/** @type {import("./setup/tally.mjs").Run[]} */
const runs = [];

const what = vitestArgs.length === 0 ? "the whole suite" : `vitest ${vitestArgs.join(" ")}`;
const pnpmVitest = [...project.pnpm, "exec", "vitest"];
runs.push(vitest(`Node ${node.version}, ${what}`, pnpmVitest, node.env, "tally.json", vitestArgs));
if (vitestArgs.length === 0 && process.env.RUSTSTREAM_NODE_LINES !== "none") {
  const own = node.version.split(".")[0];
  for (const version of nodeLines.filter((v) => v.split(".")[0] !== own)) {
    const env = nodeEnv(ensureNode(version));
    const report = `tally-node${version.split(".")[0]}.json`;
    runs.push(
      vitest(`Node ${version}, the projects that need no broker`, pnpmVitest, env, report, [
        "--config",
        "vitest.nodeLines.config.ts",
      ]),
    );
  }
}
// Bun and Deno run vitest itself, so its workers (forked with the runtime's own executable) run
// there too; RUSTSTREAM_RUNTIME lets each round trip check that it does.
if (vitestArgs.length === 0 && process.env.RUSTSTREAM_RUNTIME_LINES !== "none") {
  for (const runtime of runtimeLines) {
    const { run, env } = runtime.ensure();
    runs.push(
      vitest(
        `${runtime.title}, brokerless suites and every broker's round trip`,
        [...run, join(root, "node_modules", "vitest", "vitest.mjs")],
        { ...node.env, ...env, RUSTSTREAM_RUNTIME: runtime.name },
        `tally-${runtime.name}.json`,
        ["--config", "vitest.runtimeLines.config.ts"],
      ),
    );
  }
}

// The closing tally (tooling/setup/tally.mjs): a line per Node line and one in all, then every
// failure named, in the plain form CI reads; also kept in .cache/test-tally.txt for a caller that
// prints it after further steps.
const result = tally(runs);
writeFileSync(join(reports, "test-tally.txt"), `${result.lines.join("\n")}\n`);
process.stdout.write(`\n${result.lines.join("\n")}\n`);
process.exit(result.ok ? 0 : 1);

/**
 * One vitest run, started by `start` (pnpm's vitest on the Node of `env`, or vitest's entry on Bun
 * or Deno), with the default reporter on screen and the tally's reporter writing .cache/`report`
 * (removed first, so a tally is only ever this run's).
 * @param {string} line @param {string[]} start @param {NodeJS.ProcessEnv} env @param {string} report
 * @param {string[]} args
 * @returns {import("./setup/tally.mjs").Run}
 */
function vitest(line, start, env, report, args) {
  const reportPath = join(reports, report);
  rmSync(reportPath, { force: true });
  say(`vitest on ${line}`);
  const [command, ...rest] = start;
  const result = spawnSync(
    /** @type {string} */ (command),
    [
      ...rest,
      "run",
      // Named here, so no config's reporter list (the other lines' config has none) can leave it out.
      "--reporter=default",
      "--reporter=./tooling/setup/tallyReporter.mjs",
      ...args,
    ],
    { cwd: root, env: { ...env, RUSTSTREAM_TALLY_REPORT: reportPath }, stdio: "inherit" },
  );
  if (result.error) say(`vitest on ${line} did not start: ${result.error.message}`);
  return { line, reportPath, status: result.status ?? 1 };
}

/**
 * The librdkafka addon is built for one Node ABI: a workspace installed under another Node (an
 * earlier run before the floor moved, say) keeps an addon this Node cannot load, and pnpm does not
 * rebuild what it considers installed. Rebuild it then, rather than fail every Kafka test.
 */
function ensureAddon() {
  const cwd = join(root, "packages", "kafka");
  const load = spawnSync("node", ["-e", 'require("@confluentinc/kafka-javascript")'], {
    cwd,
    env: node.env,
    encoding: "utf8",
  });
  if (load.status === 0) return;
  say(
    `the librdkafka addon does not load on Node ${node.version} (${(load.stderr ?? "").split("\n").find((l) => l.includes("Error")) ?? "no error line"}): rebuilding it`,
  );
  pnpm(
    project,
    "rebuilding @confluentinc/kafka-javascript",
    ["rebuild", "@confluentinc/kafka-javascript"],
    {
      env: { ...node.env, CKJS_LINKING: "dynamic" },
      quiet: true,
      fix: "run `CKJS_LINKING=dynamic pnpm rebuild @confluentinc/kafka-javascript` and read its error",
    },
  );
}

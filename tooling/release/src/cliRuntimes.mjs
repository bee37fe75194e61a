// @ts-check
// The published CLI on Bun and Deno: an empty folder with `@ruststream/cli` installed from the
// registry beside core, the file broker, metrics and asyncapi, and the installed command run on each
// runtime as packages/cli's README says to run it there: a file-broker service with `--workers 2
// --metrics` (each worker's /metrics answering, then SIGTERM's drain to exit 0), `asyncapi gen`
// writing the service's document, and a module that does not compile. Then the same service in a
// folder beside it with only core and the file broker, run by that CLI: `--metrics` and `asyncapi
// gen` fall back to the CLI's own copies.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { emptyInstallFolder } from "./consumer.mjs";
import { run, start, tail } from "./run.mjs";

/**
 * A runtime as the rehearsal runs the CLI on it: the command that runs a script on it, the one
 * that starts the installed `ruststream` from the install's folder (the README's), and the
 * variables they need.
 * @typedef {{ title: string, run: string[], cli: string[], env: NodeJS.ProcessEnv }} CliRuntime
 */

/** How long the workers get to serve /metrics, and then to drain and exit after SIGTERM. */
const serveBoundMs = 60_000;
const drainBoundMs = 30_000;

/**
 * The README's command on each runtime line of tooling/setup, ensured (fetched and cached as
 * `npm test` does) by the caller before anything starts.
 * @param {import("../../setup/runtimes.mjs").RuntimeLine} line
 * @returns {CliRuntime}
 */
export function cliRuntime(line) {
  const { run: command, env } = line.ensure();
  // Bun: `bun --bun ruststream` (the bin node_modules/.bin links); Deno: the bin's file, which
  // `deno run -A` runs with the folder's node_modules.
  const cli =
    line.name === "deno"
      ? [...command, join("node_modules", "@ruststream", "cli", "bin", "ruststream.js")]
      : [...command, "ruststream"];
  return { title: line.title, run: command, cli, env };
}

/** The service the CLI runs: a file broker per worker (each its own consumer) and one subscriber. */
const appTs = `// Written by the release rehearsal (tooling/release): run by the installed CLI.
import { RustStream } from "@ruststream/core";
import { FileBroker } from "@ruststream/file";

const worker = process.env.RUSTSTREAM_WORKER ?? "1";
export const app = new RustStream({ name: "rehearsal-cli", version: "1.0.0" });
app.broker(new FileBroker({ path: "data/orders.ss", consumer: \`worker-\${worker}\` }), (b) => {
  b.subscriber("orders").handle(async (order, ctx) => {
    ctx.log.info({ order }, "handled");
  });
});
`;

/** A module that does not compile: the error must name the file, line and column. */
const brokenTs = `import { RustStream } from "@ruststream/core";

export const app = new RustStream({ name: "broken", version: "1.0.0" ;
`;

/** The operations server each worker logs when it listens (pretty logs). */
const servingLine = /serving operations (?:worker=(\d+) )?url=(http:\/\/127\.0\.0\.1:\d+)/g;

/**
 * @param {{ published: Record<string, import("./tarball.mjs").Published>, registry: string,
 *   env: NodeJS.ProcessEnv, work: string, manager: import("./consumer.mjs").Manager,
 *   runtimes: CliRuntime[], report: import("./report.mjs").Report }} context
 */
export async function rehearseCliRuntimes({
  published,
  registry,
  env,
  work,
  manager,
  runtimes,
  report,
}) {
  const where = `cli on Bun and Deno (${manager.name})`;
  const folder = join(work, `cli-${manager.name}`);
  if (!emptyInstallFolder(folder, where, report)) return;
  const specs = ["core", "file", "cli", "metrics", "asyncapi"].map((name) => {
    const pkg = published[`@ruststream/${name}`];
    if (pkg === undefined) throw new Error(`@ruststream/${name} was not published`);
    return `@ruststream/${name}@${pkg.version}`;
  });
  writeFileSync(
    join(folder, "package.json"),
    `${JSON.stringify({ name: "rehearsal-cli", private: true, type: "module" }, null, 2)}\n`,
  );
  writeFileSync(join(folder, ".npmrc"), `registry=${registry}\n`);
  writeFileSync(join(folder, "app.ts"), appTs);
  writeFileSync(join(folder, "broken.ts"), brokenTs);
  const installEnv = { ...env, npm_config_registry: registry, NO_COLOR: "1", FORCE_COLOR: "0" };
  const install = await run(manager.add(specs, false), {
    cwd: folder,
    env: installEnv,
    timeoutMs: 10 * 60_000,
  });
  if (
    !report.check(
      where,
      `${manager.name} installs ${specs.join(" ")}`,
      install.ok,
      install.ok
        ? `${(install.ms / 1000).toFixed(0)} s`
        : `${install.why}\n${tail(install.output)}`,
      "read the install's output above",
    )
  )
    return;
  // A service of its own beside the install, with only core and the file broker: what it lacks
  // (metrics, asyncapi) the CLI finds in its own install.
  const service = join(work, `service-${manager.name}`);
  mkdirSync(service, { recursive: true });
  writeFileSync(
    join(service, "package.json"),
    `${JSON.stringify({ name: "rehearsal-cli-service", private: true, type: "module" }, null, 2)}\n`,
  );
  writeFileSync(join(service, ".npmrc"), `registry=${registry}\n`);
  writeFileSync(join(service, "app.ts"), appTs);
  const serviceSpecs = specs.filter((spec) => /^@ruststream\/(core|file)@/.test(spec));
  const serviceInstall = await run(manager.add(serviceSpecs, false), {
    cwd: service,
    env: installEnv,
    timeoutMs: 10 * 60_000,
  });
  const beside = report.check(
    where,
    `${manager.name} installs ${serviceSpecs.join(" ")} in a service folder beside the CLI's`,
    serviceInstall.ok,
    serviceInstall.ok
      ? `${(serviceInstall.ms / 1000).toFixed(0)} s`
      : `${serviceInstall.why}\n${tail(serviceInstall.output)}`,
    "read the install's output above",
  );
  const installedBin = join(folder, "node_modules", "@ruststream", "cli", "bin", "ruststream.js");
  for (const runtime of runtimes) {
    const runEnv = { ...installEnv, ...runtime.env };
    const began = Date.now();
    const at = `${where}: ${runtime.title}`;
    await workers(runtime.cli, at, folder, runEnv, report);
    await asyncapiGen(runtime.cli, at, folder, runEnv, report);
    await syntaxError(runtime.cli, at, folder, runEnv, report);
    if (beside) {
      const fallback = `${at}, a service without metrics and asyncapi`;
      await workers([...runtime.run, installedBin], fallback, service, runEnv, report);
      await asyncapiGen([...runtime.run, installedBin], fallback, service, runEnv, report);
    }
    report.figure(
      `${where}: ${runtime.title}'s checks took ${((Date.now() - began) / 1000).toFixed(1)} s`,
    );
  }
}

/**
 * `run app.ts --workers 2 --http-port 0 --metrics`: each worker's /metrics answers within the
 * bound, then SIGTERM to the supervisor drains both and it exits 0 within its bound.
 * @param {string[]} cli the command that starts the CLI
 * @param {string} where
 * @param {string} folder
 * @param {NodeJS.ProcessEnv} env
 * @param {import("./report.mjs").Report} report
 */
async function workers(cli, where, folder, env, report) {
  const argv = [...cli, "run", "app.ts", "--workers", "2", "--http-port", "0", "--metrics"];
  const fix = `run \`${argv.join(" ")}\` in ${folder} (kept with --keep) and read its output`;
  const started = start(argv, { cwd: folder, env, timeoutMs: serveBoundMs + drainBoundMs });
  /** @type {string | undefined} */
  let failure;
  const deadline = Date.now() + serveBoundMs;
  /** @type {Map<string, string>} worker to URL */
  const urls = new Map();
  /** @type {Set<string>} the workers whose /metrics answered */
  const answered = new Set();
  let ended = false;
  void started.exited.then(() => {
    ended = true;
  });
  while (answered.size < 2 && failure === undefined) {
    if (ended) failure = "the CLI exited before both workers served /metrics";
    else if (Date.now() > deadline)
      failure = `${answered.size} of 2 workers' /metrics answered within ${serveBoundMs / 1000} s`;
    else {
      for (const match of started.output().matchAll(servingLine))
        urls.set(match[1] ?? "1", /** @type {string} */ (match[2]));
      for (const [worker, url] of urls)
        if (!answered.has(worker) && (await metricsAnswer(url))) answered.add(worker);
      if (answered.size < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  report.check(
    where,
    "run --workers 2 --metrics: both workers serve /metrics (Prometheus text)",
    failure === undefined,
    failure === undefined
      ? [...urls].map(([worker, url]) => `worker ${worker} ${url}`).join(", ")
      : `${failure}\n${tail(started.output())}`,
    fix,
  );
  const signalled = Date.now();
  started.signal("SIGTERM");
  const timer = setTimeout(() => started.signal("SIGKILL"), drainBoundMs);
  const result = await started.exited;
  clearTimeout(timer);
  // Each worker logs its own drained stop, and the supervisor that every worker exited 0.
  const drained = (result.output.match(/ stopped worker=\d+ failed=false/g) ?? []).length;
  const clean = /all workers stopped .*clean=true/.test(result.output);
  const ok = result.status === 0 && drained === 2 && clean;
  report.check(
    where,
    `SIGTERM: both workers drain and the CLI exits 0 within ${drainBoundMs / 1000} s`,
    ok,
    ok
      ? `${((Date.now() - signalled) / 1000).toFixed(2)} s`
      : `${result.why || "exited 0"}, ${drained} of 2 workers logged a clean stop${clean ? "" : ", no clean=true from the supervisor"}\n${tail(result.output)}`,
    fix,
  );
}

/** Whether `/metrics` at `url` answers 200 with the app's Prometheus series. */
async function metricsAnswer(/** @type {string} */ url) {
  try {
    const response = await fetch(`${url}/metrics`);
    const body = await response.text();
    return response.status === 200 && body.includes("ruststream_");
  } catch {
    // Not listening yet (or already closed): the caller's bound decides.
    return false;
  }
}

/**
 * `asyncapi gen app.ts -o asyncapi.json`: the file is JSON, an AsyncAPI 3 document with the
 * service's channel.
 * @param {string[]} cli the command that starts the CLI
 * @param {string} where
 * @param {string} folder
 * @param {NodeJS.ProcessEnv} env
 * @param {import("./report.mjs").Report} report
 */
async function asyncapiGen(cli, where, folder, env, report) {
  const argv = [...cli, "asyncapi", "gen", "app.ts", "-o", "asyncapi.json"];
  const result = await run(argv, { cwd: folder, env, timeoutMs: 60_000 });
  /** @type {string} */
  let problem = result.ok ? "" : `${result.why}\n${tail(result.output)}`;
  if (result.ok) {
    try {
      const document = JSON.parse(readFileSync(join(folder, "asyncapi.json"), "utf8"));
      const channels = Object.values(document.channels ?? {});
      if (!String(document.asyncapi).startsWith("3."))
        problem = `asyncapi is ${JSON.stringify(document.asyncapi)}, not 3.x`;
      else if (!channels.some((channel) => channel?.address === "orders"))
        problem = `no channel with the address "orders" among ${channels.length}`;
    } catch (error) {
      problem = `asyncapi.json: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  report.check(
    where,
    "asyncapi gen -o asyncapi.json writes the document with the service's channel",
    problem === "",
    problem,
    `run \`${argv.join(" ")}\` in ${folder} (kept with --keep) and read its output`,
  );
}

/**
 * `run broken.ts`: exit 1, the message naming the file with its line and column.
 * @param {string[]} cli the command that starts the CLI
 * @param {string} where
 * @param {string} folder
 * @param {NodeJS.ProcessEnv} env
 * @param {import("./report.mjs").Report} report
 */
async function syntaxError(cli, where, folder, env, report) {
  const argv = [...cli, "run", "broken.ts"];
  const result = await run(argv, { cwd: folder, env, timeoutMs: 60_000 });
  const named = /broken\.ts:3:\d+/.test(result.output);
  report.check(
    where,
    "run of a module that does not compile: exit 1, the file, line and column named",
    result.status === 1 && named,
    result.status === 1 && named ? "" : `${result.why || "exited 0"}\n${tail(result.output)}`,
    "make loadError.ts keep the runtime's syntax error message (file:line:column)",
  );
}

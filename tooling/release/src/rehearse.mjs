#!/usr/bin/env node
// @ts-check
// `pnpm release:rehearse`: the release, rehearsed end to end against a local registry, and the
// installs users make from it. See tooling/release/README.md for what it checks and its options.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ensureBrokers } from "../../brokers/src/index.mjs";
import { ensureNode, nodeEnv, nodeLines, ownNodeEnv } from "../../setup/node.mjs";
import { pnpmCommand } from "../../setup/pnpm.mjs";
import { runtimeLines } from "../../setup/runtimes.mjs";
import { cliRuntime, rehearseCliRuntimes } from "./cliRuntimes.mjs";
import { compilerPins, installCompilers } from "./compilers.mjs";
import { rehearseInstall } from "./consumer.mjs";
import { rehearseCreate } from "./create.mjs";
import { checkPackage } from "./packageChecks.mjs";
import { readmeExample } from "./readme.mjs";
import { startRegistry } from "./registry.mjs";
import { Report, say } from "./report.mjs";
import { run, stopAll, tail } from "./run.mjs";
import { brokerClients, scenarios, serverBrokers } from "./scenarios.mjs";
import {
  addRehearsalChangeset,
  copyWorkspace,
  pointAtRegistry,
  publishedPackages,
  withoutProvenance,
} from "./scratch.mjs";
import { readPublished } from "./tarball.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const usage = `usage: pnpm release:rehearse [--node <${nodeLines.join("|")}>] [--only <install,...>] [--managers npm,pnpm] [--keep]`;

const { values: options } = parseArgs({
  options: {
    node: { type: "string", default: process.env.RUSTSTREAM_RELEASE_NODE },
    only: { type: "string", default: process.env.RUSTSTREAM_RELEASE_ONLY },
    managers: { type: "string", default: process.env.RUSTSTREAM_RELEASE_MANAGERS ?? "npm,pnpm" },
    keep: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (options.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (options.node !== undefined && !nodeLines.includes(options.node)) {
  process.stderr.write(
    `[release] --node ${options.node} is not one of the project's Node lines (${nodeLines.join(", ")})\n${usage}\n`,
  );
  process.exit(2);
}
const managers = options.managers.split(",").filter(Boolean);
if (managers.some((name) => name !== "npm" && name !== "pnpm")) {
  process.stderr.write(
    `[release] --managers takes npm and pnpm, not "${options.managers}"\n${usage}\n`,
  );
  process.exit(2);
}

// `--only` names installs, and the steps after them: `cli` (the published CLI on Bun and Deno) and
// `create` (the scaffolder); without it everything runs.
const only = options.only?.split(",").filter(Boolean);
const wants = (/** @type {string} */ id) => only === undefined || only.includes(id);
// Bun and Deno fetched (or found cached) as `npm test` gets them, before anything starts: one that
// cannot be fetched stops the rehearsal here with tooling/setup's message and its fix.
const cliRuntimes = wants("cli") ? runtimeLines.map(cliRuntime) : [];

const started = Date.now();
const report = new Report();
const work = mkdtempSync(join(tmpdir(), "ruststream-rehearsal-"));
/** @type {Awaited<ReturnType<typeof startRegistry>> | undefined} */
let registry;

// Stopped from outside: end what runs, the registry first, and leave nothing behind.
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP"])) {
  process.on(signal, () => {
    say(`stopped by ${signal}: ending the registry and the commands still running`);
    stopAll();
    void (registry?.stop() ?? Promise.resolve()).finally(() => {
      if (!options.keep) rmSync(work, { recursive: true, force: true });
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1));
    });
  });
}

try {
  await rehearse();
} catch (error) {
  report.check(
    "rehearsal",
    "ran to its end",
    false,
    error instanceof Error ? error.message : String(error),
    "fix what the message names and run `pnpm release:rehearse` again",
  );
} finally {
  await registry?.stop();
  if (options.keep) say(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
process.stdout.write(report.summary(Date.now() - started));
process.exit(report.failed.length > 0 ? 1 : 0);

async function rehearse() {
  // The installs' Node: this one, or another of the project's lines fetched like npm test does.
  const installNode = options.node ?? process.versions.node;
  const installEnv = userEnv(options.node ? nodeEnv(ensureNode(options.node)) : ownNodeEnv());
  say(
    `work folder ${work}; the build on Node ${process.versions.node}, the installs on Node ${installNode}`,
  );
  const readme = readmeExample(root);

  registry = await startRegistry(mkdirIn(work, "registry"));
  say(
    `registry ${registry.url} (Verdaccio; @ruststream/* from its own storage, the rest from the npm registry)`,
  );
  const before = await fetch(new URL("@ruststream%2fcore", registry.url));
  report.check(
    "registry",
    "@ruststream/* is not proxied (core unknown before the publish)",
    before.status === 404,
    `HTTP ${before.status}`,
    'keep "@ruststream/*" without a proxy in tooling/release/src/registry.mjs',
  );

  const scratch = mkdirIn(work, "workspace");
  const copied = await copyWorkspace(root, scratch);
  say(`copied ${copied} files of ${root} to ${scratch}`);
  const pnpm = pnpmCommand(root, process.env);
  const lock = process.env.RUSTSTREAM_INSTALL_LOCK
    ? ["flock", process.env.RUSTSTREAM_INSTALL_LOCK]
    : [];
  // Scripts off: building and packing need none of the native builds, which the installs below test.
  await step(
    "install the scratch workspace",
    [...lock, ...pnpm, "install", "--frozen-lockfile", "--prefer-offline", "--ignore-scripts"],
    scratch,
  );
  const names = publishedPackages(scratch).map((pkg) => pkg.name);
  addRehearsalChangeset(scratch, names);
  await step("changeset version", [...pnpm, "exec", "changeset", "version"], scratch);
  const versions = new Map(
    publishedPackages(scratch).map((pkg) => [pkg.name, String(pkg.manifest.version)]),
  );
  const distinct = [...new Set(versions.values())];
  report.check(
    "version",
    "every published package at one new version",
    distinct.length === 1 && distinct[0] !== "0.0.0",
    [...versions].map(([name, v]) => `${name}@${v}`).join(", "),
    'keep every @ruststream package in the one "fixed" group of .changeset/config.json',
  );
  await step("build", [...pnpm, "run", "build"], scratch);
  pointAtRegistry(scratch, registry.url, registry.token);
  const provenance = withoutProvenance(scratch);
  report.check(
    "provenance",
    "every published package asks npm for a provenance statement (turned off for the local registry, which has no CI identity to sign with)",
    provenance.length === names.length,
    `${provenance.length} of ${names.length}`,
    'set "publishConfig": { "access": "public", "provenance": true } in each package.json',
  );
  const publishEnv = { ...process.env, npm_config_registry: registry.url };
  await step("changeset publish", [...pnpm, "exec", "changeset", "publish"], scratch, publishEnv);

  /** @type {Record<string, import("./tarball.mjs").Published>} */
  const published = {};
  for (const [name, version] of versions) {
    published[name] = await readPublished(registry.url, name, version);
    checkPackage(published[name], report, { released: true });
  }

  const brokers = new Set(serverBrokers);
  const all = scenarios(published, {});
  const steps = ["cli", "create"];
  const chosen = only ? all.filter((scenario) => only.includes(scenario.id)) : all;
  const unknown = (only ?? []).filter(
    (id) => !steps.includes(id) && !all.some((scenario) => scenario.id === id),
  );
  if (unknown.length > 0)
    throw new Error(
      `--only names what does not exist: ${unknown.join(",")}; the installs are ${all.map((s) => s.id).join(", ")}, the steps after them ${steps.join(", ")}`,
    );
  const needed = [
    ...new Set(chosen.map((scenario) => scenario.broker).filter((b) => brokers.has(b))),
  ];
  if (needed.length > 0) await ensureBrokers(needed, (line) => say(line));
  const devSpecs = testTools(scratch, published);
  // The compilers serve the installs' type checks only.
  const compilers =
    chosen.length === 0
      ? []
      : await installCompilers({
          scratch,
          registry: registry.url,
          env: installEnv,
          work: mkdirIn(work, "compilers"),
          report,
        });
  const context = {
    registry: registry.url,
    env: installEnv,
    work: mkdirIn(work, "installs"),
    devSpecs,
    readme,
    clients: brokerClients(published),
    compilers,
    report,
  };
  for (const scenario of scenarios(published, process.env).filter((s) =>
    chosen.some((c) => c.id === s.id),
  )) {
    for (const name of managers) {
      const started = Date.now();
      await rehearseInstall(
        scenario,
        manager(/** @type {"npm" | "pnpm"} */ (name), [...lock, ...pnpm]),
        context,
      );
      report.figure(
        `${scenario.id} (${name}): the whole install rehearsal took ${((Date.now() - started) / 1000).toFixed(0)} s on Node ${installNode}`,
      );
    }
  }
  // One install is enough to run the published command on each runtime: the first manager's.
  const cliManager = /** @type {"npm" | "pnpm" | undefined} */ (managers[0]);
  if (wants("cli") && cliManager === undefined)
    report.skip("the CLI on Bun and Deno", "--managers names no package manager to install it");
  else if (wants("cli") && cliManager !== undefined) {
    const began = Date.now();
    await rehearseCliRuntimes({
      published,
      registry: registry.url,
      env: installEnv,
      work: mkdirIn(work, "cli"),
      manager: manager(cliManager, [...lock, ...pnpm]),
      runtimes: cliRuntimes,
      report,
    });
    report.figure(
      `cli on Bun and Deno (${cliManager}): the install and both runtimes' checks took ${((Date.now() - began) / 1000).toFixed(0)} s`,
    );
  }
  if (wants("create"))
    await rehearseCreate({
      scratch,
      version: versions.get("@ruststream/core"),
      registry: registry.url,
      env: installEnv,
      work: mkdirIn(work, "create"),
      report,
    });
}

/**
 * A step of the release itself: a failure ends the rehearsal, with the step's output.
 * @param {string} what
 * @param {string[]} argv
 * @param {string} cwd
 * @param {NodeJS.ProcessEnv} [env]
 */
async function step(what, argv, cwd, env) {
  say(`${what}: ${argv.join(" ")}`);
  const result = await run(argv, { cwd, env, timeoutMs: 20 * 60_000 });
  report.check(
    "release",
    what,
    result.ok,
    result.ok ? `${(result.ms / 1000).toFixed(0)} s` : `${result.why}\n${tail(result.output, 30)}`,
    `run \`${argv.join(" ")}\` in a copy of the workspace and read its error`,
  );
  if (!result.ok) throw new Error(`${what} failed, so nothing after it can run`);
  return result.output;
}

/**
 * @param {"npm" | "pnpm"} name
 * @param {string[]} pnpm the pnpm command line
 * @returns {import("./consumer.mjs").Manager}
 */
function manager(name, pnpm) {
  if (name === "npm")
    return {
      name,
      add: (specs, dev) => [
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        ...(dev ? ["--save-dev"] : []),
        ...specs,
      ],
    };
  return {
    name,
    add: (specs, dev) => [
      ...pnpm,
      "add",
      "--reporter=append-only",
      ...(dev ? ["--save-dev"] : []),
      ...specs,
    ],
  };
}

/**
 * What a user adds to test and type-check: @ruststream/testing, vitest at its peer range, the
 * TypeScript the project builds with, and zod (the README's service validates with it).
 * @param {string} scratch
 * @param {Record<string, import("./tarball.mjs").Published>} published
 */
function testTools(scratch, published) {
  const testing = published["@ruststream/testing"];
  if (testing === undefined) throw new Error("@ruststream/testing was not published");
  const rootManifest = JSON.parse(readFileSync(join(scratch, "package.json"), "utf8"));
  const example = JSON.parse(
    readFileSync(join(scratch, "examples", "orders", "package.json"), "utf8"),
  );
  return [
    `@ruststream/testing@${testing.version}`,
    `vitest@${testing.manifest.peerDependencies?.vitest ?? rootManifest.devDependencies.vitest}`,
    `typescript@${compilerPins(scratch).project}`,
    `zod@${example.dependencies.zod}`,
  ];
}

/**
 * The environment a user's shell has: without what `pnpm run` adds (npm_* and pnpm's own), which
 * would steer the installs, but with the Node headers native builds need.
 * @param {NodeJS.ProcessEnv} env
 */
function userEnv(env) {
  return Object.fromEntries(
    Object.entries(env).filter(
      ([key]) => key === "npm_config_nodedir" || !/^(npm_|pnpm_|PNPM_|INIT_CWD$)/.test(key),
    ),
  );
}

/** @param {string} parent @param {string} name */
function mkdirIn(parent, name) {
  return mkdtempSync(join(parent, `${name}-`));
}

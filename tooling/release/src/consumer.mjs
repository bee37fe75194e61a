// @ts-check
// One install as a user makes it: an empty folder outside the workspace (no node_modules or
// package.json above it), the packages from the local registry with npm or pnpm, then the user's
// first hour: a service in ESM and in CommonJS on the real broker, the service type-checked under
// NodeNext and Bundler resolution by each TypeScript compiler (src/compilers.mjs), the README's test, every entry loaded both ways, and no other
// broker's client in node_modules.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { bytesText, inventory, packageCount } from "./nodeModules.mjs";
import { onBroker } from "./readme.mjs";
import { run, tail } from "./run.mjs";
import { foreignClients } from "./scenarios.mjs";
import { entriesScript, importedNames, serviceScript, serviceTs, tsconfig } from "./templates.mjs";

/**
 * @typedef {{ name: "npm" | "pnpm", add: (specs: string[], dev: boolean) => string[] }} Manager
 * @typedef {{ registry: string, env: NodeJS.ProcessEnv, work: string, devSpecs: string[],
 *   readme: { service: string, test: string }, clients: Record<string, string[]>,
 *   compilers: import("./compilers.mjs").Compiler[], report: import("./report.mjs").Report }} Context
 */

/**
 * @param {import("./scenarios.mjs").Scenario} scenario
 * @param {Manager} manager
 * @param {Context} context
 */
export async function rehearseInstall(scenario, manager, context) {
  const { report } = context;
  const where = `${scenario.id} (${manager.name})`;
  const folder = join(context.work, `${scenario.id}-${manager.name}`);
  if (!emptyInstallFolder(folder, where, report)) return;
  writeFileSync(
    join(folder, "package.json"),
    `${JSON.stringify(projectManifest(scenario), null, 2)}\n`,
  );
  writeFileSync(join(folder, ".npmrc"), `registry=${context.registry}\n`);
  // Colourless, so the tools' errors read plainly in the report.
  const env = {
    ...context.env,
    ...scenario.env,
    npm_config_registry: context.registry,
    NO_COLOR: "1",
    FORCE_COLOR: "0",
  };

  const runtime = await run(manager.add(scenario.install, false), {
    cwd: folder,
    env,
    timeoutMs: 15 * 60_000,
  });
  if (
    !report.check(
      where,
      `${manager.name} installs ${scenario.install.join(" ")}`,
      runtime.ok,
      runtime.ok
        ? `${(runtime.ms / 1000).toFixed(0)} s`
        : `${runtime.why}\n${tail(runtime.output)}`,
      "read the install's output above",
    )
  )
    return;
  const installed = inventory(folder);
  report.figure(
    `${where}: installed ${bytesText(installed.bytes)} in node_modules, ${packageCount(installed.packages)} packages, in ${(runtime.ms / 1000).toFixed(0)} s`,
  );

  const foreign = foreignClients(scenario, context.clients).filter((name) =>
    installed.packages.has(name),
  );
  report.check(
    where,
    "no other broker's client installed",
    foreign.length === 0,
    foreign.length ? `node_modules holds ${foreign.join(", ")}` : "",
    "make that client an optional peer (or drop it) in the package that brings it",
  );

  const dev = await run(manager.add(context.devSpecs, true), {
    cwd: folder,
    env,
    timeoutMs: 10 * 60_000,
  });
  if (
    !report.check(
      where,
      `${manager.name} adds ${context.devSpecs.join(" ")}`,
      dev.ok,
      dev.ok ? "" : `${dev.why}\n${tail(dev.output)}`,
      "read the install's output above",
    )
  )
    return;
  const full = inventory(folder);
  report.figure(
    `${where}: with the test tools ${bytesText(full.bytes)}, ${packageCount(full.packages)} packages${full.packages.has("@types/node") ? " (@types/node among them)" : ""}`,
  );
  const foreignLater = foreignClients(scenario, context.clients).filter((name) =>
    full.packages.has(name),
  );
  report.check(
    where,
    "no other broker's client with the test tools",
    foreignLater.length === 0,
    foreignLater.length ? `node_modules holds ${foreignLater.join(", ")}` : "",
    "make that client an optional peer (or drop it) in the package that brings it",
  );

  await services(scenario, where, folder, env, report);
  await typecheck(scenario, where, folder, env, context);
  await readmeTest(where, folder, env, context);
  await entries(where, folder, env, report);
}

/**
 * Makes `folder` for an install, checked to have nothing of a project above it (a node_modules or
 * package.json there would resolve what the install should bring): whether it has none.
 * @param {string} folder @param {string} where
 * @param {import("./report.mjs").Report} report
 */
export function emptyInstallFolder(folder, where, report) {
  mkdirSync(folder, { recursive: true });
  const above = somethingAbove(folder);
  return report.check(
    where,
    "nothing of a project above the folder",
    above === undefined,
    above ?? "",
    "set TMPDIR to a folder with no node_modules or package.json above it",
  );
}

/** The first folder above `folder` holding node_modules or package.json, if any. */
function somethingAbove(/** @type {string} */ folder) {
  for (let dir = dirname(folder); ; dir = dirname(dir)) {
    for (const name of ["node_modules", "package.json"])
      if (existsSync(join(dir, name))) return `${join(dir, name)} exists`;
    if (dirname(dir) === dir) return undefined;
  }
}

/** @param {import("./scenarios.mjs").Scenario} scenario */
function projectManifest(scenario) {
  /** @type {Record<string, unknown>} */
  const manifest = { name: `rehearsal-${scenario.id}`, private: true, type: "module" };
  // pnpm runs no dependency's install script unless the project allows it: librdkafka is built by one.
  if (scenario.id === "kafka-librdkafka")
    manifest.pnpm = { onlyBuiltDependencies: ["@confluentinc/kafka-javascript"] };
  return manifest;
}

/**
 * @param {import("./scenarios.mjs").Scenario} scenario
 * @param {string} where
 * @param {string} folder
 * @param {NodeJS.ProcessEnv} env
 * @param {import("./report.mjs").Report} report
 */
async function services(scenario, where, folder, env, report) {
  const code = scenario.code(folder);
  for (const [kind, file] of /** @type {const} */ ([
    ["esm", "service.mjs"],
    ["cjs", "service.cjs"],
  ])) {
    const topic = `rehearsal-${scenario.id}-${kind}-${Date.now()}`;
    writeFileSync(join(folder, file), serviceScript(code, topic, kind));
    const result = await run(["node", file], { cwd: folder, env, timeoutMs: 120_000 });
    const line =
      result.output.split("\n").find((text) => text.startsWith(`${kind}: published`)) ?? "";
    const ok = result.ok && line.includes("handled");
    if (
      report.check(
        where,
        `${file} publishes and handles a message`,
        ok,
        ok ? "" : `${result.why}\n${tail(result.output)}`,
        `run \`node ${file}\` in ${folder} (kept with --keep) and read its error`,
      )
    )
      report.figure(`${where}: ${line}`);
  }
}

/**
 * @param {import("./scenarios.mjs").Scenario} scenario
 * @param {string} where
 * @param {string} folder
 * @param {NodeJS.ProcessEnv} env
 * @param {Context} context
 */
async function typecheck(scenario, where, folder, env, { readme, report, compilers }) {
  const code = scenario.code(folder);
  const app =
    scenario.broker === "file"
      ? readme.service
      : onBroker(readme.service, {
          importLine: `import { ${importedNames(code)} } from "${code.module}";`,
          construct: code.construct,
        });
  writeFileSync(join(folder, "app.ts"), app);
  writeFileSync(join(folder, "service.ts"), serviceTs(code));
  for (const resolution of /** @type {const} */ (["NodeNext", "Bundler"])) {
    const config = `tsconfig.${resolution.toLowerCase()}.json`;
    writeFileSync(join(folder, config), tsconfig(resolution));
    for (const compiler of compilers) {
      const result = await run(["node", compiler.tsc(folder), "-p", config], {
        cwd: folder,
        env,
        timeoutMs: 180_000,
      });
      report.check(
        where,
        `tsc ${compiler.version} --strict (${resolution}, no skipLibCheck, no @types/node of ours)`,
        result.ok,
        result.ok
          ? `${(result.ms / 1000).toFixed(1)} s`
          : `${result.why}: ${errorSummary(result.output)}`,
        `make the published .d.ts stand without @types/node under TypeScript ${compiler.version} (no NodeJS namespace, Buffer or node: imports in public types) or declare @types/node as a dependency; \`node ${compiler.tsc(folder)} -p ${config}\` in ${folder} (kept with --keep) shows every error`,
      );
    }
  }
}

/**
 * The README's test, as written, on the README's service (on this install's broker).
 * @param {string} where
 * @param {string} folder
 * @param {NodeJS.ProcessEnv} env
 * @param {Context} context
 */
async function readmeTest(where, folder, env, { readme, report }) {
  writeFileSync(join(folder, "app.test.ts"), readme.test);
  const result = await run(["node", "node_modules/vitest/vitest.mjs", "run", "--reporter=dot"], {
    cwd: folder,
    env,
    timeoutMs: 180_000,
  });
  const passed = /Tests\s+1 passed/.test(result.output);
  report.check(
    where,
    "the root README's test passes under vitest",
    result.ok && passed,
    result.ok && passed ? "" : `${result.why}: ${errorSummary(result.output)}`,
    'make the README\'s test run as written (it needs `import { expect, test } from "vitest"`)',
  );
}

/**
 * Every entry (each `exports` subpath) of every installed @ruststream package, by require() and by import().
 * @param {string} where
 * @param {string} folder
 * @param {NodeJS.ProcessEnv} env
 * @param {import("./report.mjs").Report} report
 */
async function entries(where, folder, env, report) {
  const scope = join(folder, "node_modules", "@ruststream");
  /** @type {Record<string, string[]>} */
  const specs = {};
  /** @type {Record<string, string[]>} */
  const optionalPeers = {};
  /** Entries whose export names no `require` (or `default`) condition: ES modules only, by design. */
  const esmOnly = new Set();
  for (const name of readdirSync(scope)) {
    const manifest = JSON.parse(readFileSync(join(scope, name, "package.json"), "utf8"));
    optionalPeers[manifest.name] = Object.entries(manifest.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta?.optional === true)
      .map(([peer]) => peer);
    const exports =
      typeof manifest.exports === "object" &&
      manifest.exports !== null &&
      !Array.isArray(manifest.exports) &&
      Object.keys(manifest.exports).some((key) => key.startsWith("."))
        ? Object.keys(manifest.exports)
        : ["."];
    const specOf = (/** @type {string} */ key) =>
      key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`;
    specs[manifest.name] = exports.filter((key) => key !== "./package.json").map(specOf);
    for (const key of exports) {
      const target = manifest.exports?.[key];
      if (
        typeof target === "object" &&
        target !== null &&
        !("require" in target || "default" in target)
      )
        esmOnly.add(specOf(key));
    }
  }
  const all = Object.values(specs).flat();
  for (const kind of /** @type {const} */ (["cjs", "mjs"])) {
    const file = `entries.${kind}`;
    writeFileSync(join(folder, file), entriesScript(kind));
    const result = await run(["node", file, JSON.stringify(all)], {
      cwd: folder,
      env,
      timeoutMs: 60_000,
    });
    /** @type {Record<string, { ok: boolean, error?: string }>} */
    let loaded = {};
    try {
      loaded = JSON.parse(result.output.trim().split("\n").pop() ?? "{}");
    } catch {
      // Reported below: every entry counts as failed.
    }
    const how = kind === "cjs" ? "require()" : "import()";
    for (const [name, list] of Object.entries(specs)) {
      // An entry for an optional peer (core's msgpack and cbor codecs) may only fail by naming that
      // peer, which this install leaves out as users who do not use it do.
      const waiting = list.filter((spec) => {
        const missing = /Cannot find (?:module|package) '((?:@[^/']+\/)?[^/']+)/.exec(
          loaded[spec]?.error ?? "",
        )?.[1];
        return missing !== undefined && (optionalPeers[name] ?? []).includes(missing);
      });
      // An ES-only entry must refuse require() as its exports say, not load half or fail otherwise.
      const refused = (/** @type {string} */ spec) =>
        kind === "cjs" &&
        esmOnly.has(spec) &&
        loaded[spec]?.ok !== true &&
        /is not defined by "exports"|ERR_PACKAGE_PATH_NOT_EXPORTED/.test(loaded[spec]?.error ?? "");
      const asDeclared = list.filter(refused);
      const failed = list.filter(
        (spec) => loaded[spec]?.ok !== true && !waiting.includes(spec) && !refused(spec),
      );
      const notes = [
        ...(waiting.length ? [`${waiting.join(", ")}: only the optional peer missing`] : []),
        ...(asDeclared.length
          ? [`${asDeclared.join(", ")}: ES modules only, require() refused as its exports declare`]
          : []),
      ];
      const detail = failed.length
        ? failed.map((spec) => `${spec}: ${loaded[spec]?.error ?? result.why}`).join("; ")
        : notes.join("; ");
      report.check(
        where,
        `${how} of every ${name} entry (${list.length})`,
        failed.length === 0,
        detail,
        `make each entry of ${name} load by ${how} (its ${kind === "cjs" ? "CommonJS" : "ES module"} build and what that build requires)`,
      );
    }
  }
}

/** The distinct error lines of a tool's output, at most five, on one line. */
function errorSummary(/** @type {string} */ output) {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /error TS\d+|Error:|is not defined|FAIL/.test(line));
  // "node_modules/.pnpm/<id>/node_modules/@ruststream/core/dist/index.d.ts(3,4): error TS2503: ..."
  // reads as "@ruststream/core: error TS2503: ...": which package, not which line of it.
  const where = /^(?:.*node_modules\/)?((?:@[^/]+\/)?[^/(]+)[^:]*?\(\d+,\d+\): (error TS\d+: .*)$/;
  const distinct = [...new Set(lines.map((line) => line.replace(where, "$1: $2")))];
  const keep = distinct.slice(0, 5).join(" | ");
  return keep || tail(output, 5);
}

// @ts-check
// The TypeScript compilers each install's services are type-checked with: the project's TypeScript,
// which every install adds as a user's dev dependency, and TypeScript 7 (the native compiler,
// `typescript`'s latest), installed once beside the installs. Where tsc lives changes nothing of what
// it resolves (the project's tsconfig and node_modules decide that; each compiler brings its own
// lib files), so one copy of 7 serves every install and the installs stay as users make them.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, tail } from "./run.mjs";

/**
 * A compiler by its version, and where its tsc is for an install's folder.
 * @typedef {{ version: string, tsc: (folder: string) => string }} Compiler
 */

/**
 * The root manifest's pin of each compiler: `typescript` (the JS API the build tools load) and
 * `typescript-7`, an alias of `typescript` at 7 (`npm:typescript@7.x.y`).
 * @param {string} scratch the scratch workspace
 */
export function compilerPins(scratch) {
  const devDependencies =
    JSON.parse(readFileSync(join(scratch, "package.json"), "utf8")).devDependencies ?? {};
  const project = String(devDependencies.typescript ?? "");
  const native = /^npm:typescript@(\d+\.\d+\.\d+)$/.exec(
    devDependencies["typescript-7"] ?? "",
  )?.[1];
  if (!/^\d+\.\d+\.\d+$/.test(project) || native === undefined)
    throw new Error(
      `the root package.json must pin "typescript" (an exact version) and "typescript-7" ("npm:typescript@<exact 7 version>"), the compilers the installs are type-checked with; it has ${JSON.stringify({ typescript: devDependencies.typescript, "typescript-7": devDependencies["typescript-7"] })}`,
    );
  return { project, native };
}

/**
 * Both compilers: the project's from each install's node_modules, 7 installed once into `work` with
 * npm from the local registry (on the installs' Node). A failed install of 7 is a failed check, and
 * the installs are then type-checked with the project's compiler alone.
 * @param {{ scratch: string, registry: string, env: NodeJS.ProcessEnv, work: string,
 *   report: import("./report.mjs").Report }} options
 * @returns {Promise<Compiler[]>}
 */
export async function installCompilers({ scratch, registry, env, work, report }) {
  const { project, native } = compilerPins(scratch);
  /** @type {Compiler[]} */
  const compilers = [
    { version: project, tsc: (folder) => join(folder, "node_modules", "typescript", "bin", "tsc") },
  ];
  const folder = join(work, `typescript-${native}`);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "package.json"), '{ "private": true }\n');
  const result = await run(
    [
      "npm",
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `--registry=${registry}`,
      `typescript@${native}`,
    ],
    { cwd: folder, env, timeoutMs: 5 * 60_000 },
  );
  const ok = report.check(
    "typescript",
    `npm installs typescript@${native} (the second compiler of the installs' tsc checks)`,
    result.ok,
    result.ok ? `${(result.ms / 1000).toFixed(0)} s` : `${result.why}\n${tail(result.output)}`,
    "read the install's output above",
  );
  const tsc = join(folder, "node_modules", "typescript", "bin", "tsc");
  if (ok) compilers.push({ version: native, tsc: () => tsc });
  return compilers;
}

// @ts-check
// pnpm at the version the root package.json pins (`packageManager`): the one on PATH when it is that
// version, else brought by npx (cached by npm after the first time).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { say, step } from "./step.mjs";

/**
 * The pnpm command line for this project, run in `env` (whose PATH decides the Node it runs on).
 * @param {string} root
 * @param {NodeJS.ProcessEnv} env
 */
export function pnpmCommand(root, env) {
  const pinned = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager;
  const version = pinned.split("@")[1];
  const local = spawnSync("pnpm", ["--version"], { encoding: "utf8", env });
  if (local.status === 0 && local.stdout.trim() === version) return ["pnpm"];
  say(`pnpm ${version} (package.json's packageManager) through npx`);
  return ["npx", "--yes", `pnpm@${version}`];
}

/**
 * Runs pnpm with `args` in the project; a failure names the step and the fix.
 * @param {{ root: string, env: NodeJS.ProcessEnv, pnpm: string[] }} project
 * @param {string} what
 * @param {string[]} args
 * @param {{ fix: string, quiet?: boolean, env?: NodeJS.ProcessEnv }} options
 */
export function pnpm(project, what, args, options) {
  step(what, [...project.pnpm, ...args], {
    cwd: project.root,
    env: options.env ?? project.env,
    fix: options.fix,
    quiet: options.quiet,
  });
}

#!/usr/bin/env node
// Runs a pnpm command at the version package.json pins, installing the workspace first, so that
// `npm start` and `npm test` work on a machine that has only Node and npm. With pnpm at the pinned
// version on PATH it is used as is; otherwise npx brings that exact version.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pinned = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager;
const version = pinned.split("@")[1];

const local = spawnSync("pnpm", ["--version"], { encoding: "utf8" });
const pnpm =
  local.status === 0 && local.stdout.trim() === version
    ? ["pnpm"]
    : ["npx", "--yes", `pnpm@${version}`];

function run(args) {
  const [command, ...rest] = [...pnpm, ...args];
  const result = spawnSync(command, rest, { cwd: root, stdio: "inherit" });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// A no-op in about a second when node_modules matches the lockfile.
run(["install", "--frozen-lockfile", "--prefer-offline", "--reporter=silent"]);
run(process.argv.slice(2));

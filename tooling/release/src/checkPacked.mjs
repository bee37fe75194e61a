#!/usr/bin/env node
// @ts-check
// `check:package` of one package (run from its folder by `pnpm check:packages`): packs it as pnpm
// publishes it, then holds that tarball to what the release rehearsal holds each published one to
// (packageChecks.mjs: licence, metadata, ranges on the other @ruststream packages; its changelog
// exists only once `changeset version` wrote it) and runs publint and attw on it. Not on the
// folder: pnpm's publishConfig swaps in the published `exports` (without the workspace's
// `@ruststream/source` condition, whose src/ is not shipped), and only the tarball has them;
// `npm pack`, which `attw --pack` runs, does not. Arguments go to attw: @ruststream/testing passes
// `--ignore-rules no-resolution`, since its /conformance entry is ES module only on purpose (vitest
// cannot be required).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pnpmCommand } from "../../setup/pnpm.mjs";
import { checkPackage } from "./packageChecks.mjs";
import { Report } from "./report.mjs";
import { readPacked } from "./tarball.mjs";

const root = join(import.meta.dirname, "..", "..", "..");

/**
 * The command line of a root devDependency's bin, on this Node (no shell, no PATH lookup).
 * @param {string} pkg
 * @param {string} bin
 */
function binOf(pkg, bin) {
  // Read from the root's node_modules: not every package exports its package.json.
  const dir = join(root, "node_modules", pkg);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const relative = typeof manifest.bin === "string" ? manifest.bin : manifest.bin[bin];
  return [process.execPath, join(dir, relative)];
}

/** pnpm as this run was started by (`npm_execpath`), else the pinned one. */
function pnpm() {
  const started = process.env.npm_execpath;
  if (started !== undefined && /pnpm\.c?js$/.test(started)) return [process.execPath, started];
  return pnpmCommand(root, process.env);
}

/**
 * @param {string[]} command
 * @param {string} fix
 */
function run(command, fix) {
  const [file, ...args] = command;
  if (file === undefined) throw new Error("empty command");
  try {
    execFileSync(file, args, { stdio: "inherit" });
  } catch {
    console.error(`check:package: \`${command.slice(1).join(" ")}\` failed; ${fix}`);
    process.exit(1);
  }
}

const out = mkdtempSync(join(tmpdir(), "rs-pack-"));
try {
  run([...pnpm(), "pack", "--pack-destination", out], "run `pnpm build` first");
  const tarball = readdirSync(out).find((f) => f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`pnpm pack wrote no tarball in ${out}`);
  const packed = join(out, tarball);
  const report = new Report();
  checkPackage(readPacked(packed), report, { released: false });
  if (report.failed.length > 0) {
    const fixes = [...new Set(report.failed.map((check) => check.fix))];
    console.error(
      `check:package: the tarball fails ${report.failed.length} check(s); ${fixes.join("; ")}`,
    );
    process.exit(1);
  }
  run(
    [...binOf("publint", "publint"), "run", "--strict", packed],
    "fix what publint reports in package.json",
  );
  run(
    [
      ...binOf("@arethetypeswrong/cli", "attw"),
      packed,
      "--profile",
      "node16",
      ...process.argv.slice(2),
    ],
    "fix the types attw reports (exports' types conditions, the .d.ts/.d.cts files)",
  );
} finally {
  rmSync(out, { recursive: true, force: true });
}

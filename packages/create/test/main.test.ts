import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { beforeAll, expect, it } from "vitest";
import { assembleTemplates } from "../scripts/templates.js";
import { main } from "../src/main.js";
import { tempDir } from "./tempDir.js";

const dir = tempDir("ruststream-create-main-");
let templates: string;
beforeAll(async () => {
  templates = await assembleTemplates(join(dir, "templates"));
});

/** Everything written to `stream` so far: one read() returns only the first chunk on Node 26. */
function drained(stream: PassThrough): string {
  let text = "";
  for (let chunk = stream.read(); chunk !== null; chunk = stream.read()) text += String(chunk);
  return text;
}

/** Runs the command as a script would (stdin no terminal), keeping its output and installs. */
async function run(argv: string[], userAgent = "npm/11.0.0 node/v24.0.0") {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const installs: string[] = [];
  const code = await main(argv, {
    stdin: new PassThrough(),
    stdout,
    stderr,
    cwd: dir,
    env: { npm_config_user_agent: userAgent },
    templates,
    install: async (directory, manager) => {
      installs.push(`${manager} ${directory}`);
    },
  });
  return { code, out: drained(stdout), err: drained(stderr), installs };
}

it("the release rehearsal's invocation: writes the project and installs it with npm", async () => {
  const { code, out, installs } = await run(["svc", "--broker", "redis", "--yes"]);
  expect(code).toBe(0);
  expect(installs).toEqual([`npm ${join(dir, "svc")}`]);
  expect(out).toMatch(/Wrote svc, a RustStream service on redis, in svc/);
  expect(out).toMatch(/cd svc\n {2}npm test\n/);
  const pkg = JSON.parse(readFileSync(join(dir, "svc", "package.json"), "utf8"));
  expect(pkg.dependencies["@ruststream/core"]).toBe(
    JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version,
  );
});

it("installs with the package manager that ran it, or not at all with --no-install", async () => {
  expect((await run(["p", "-b", "file"], "pnpm/10.0.0 npm/? node/v24")).installs).toEqual([
    `pnpm ${join(dir, "p")}`,
  ]);
  const skipped = await run(["q", "-b", "file", "--no-install"]);
  expect(skipped.installs).toEqual([]);
  expect(skipped.out).toMatch(/cd q\n {2}npm install\n {2}npm test/);
});

it("refuses without a terminal what it would have to guess, exit 2, writing nothing", async () => {
  const { code, err } = await run(["guess"]);
  expect(code).toBe(2);
  expect(err).toMatch(/^create-ruststream: no broker given/);
  expect(existsSync(join(dir, "guess"))).toBe(false);
});

it("refuses a directory that is not empty, exit 1", async () => {
  await run(["taken", "-b", "file", "--no-install"]);
  const { code, err } = await run(["taken", "-b", "file"]);
  expect(code).toBe(1);
  expect(err).toMatch(/taken is not empty/);
});

it("prints its help and its version", async () => {
  const help = await run(["--help"]);
  expect(help.code).toBe(0);
  expect(help.out).toMatch(/npm init @ruststream \[<directory>\] \[-- <flags>\]/);
  expect((await run(["--version"])).out).toMatch(/^\d+\.\d+\.\d+/);
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtimeName } from "@ruststream/core/broker";
import { expect, test } from "vitest";
import { fixtures, runCli, startCli } from "./cli.js";

const fixture = (name: string): string => join(fixtures, name);

test("a module without an app: the error names each export with its type, and the fix", async () => {
  const result = await runCli(["run", fixture("noApp.ts")]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('noApp.ts has no export named "app".');
  expect(result.stderr).toContain(
    "It exports: Order (class Order), broker (MemoryBroker), helper (function), region (string).",
  );
  expect(result.stderr).toContain(
    'Fix: export the app from the module, `export const app = new RustStream({ name: "orders", version: "1.0.0" })`, or name the export that holds it with --app <name>.',
  );
});

test("an app under another name: the error points at --app, and --app runs it", async () => {
  const missing = await runCli(["run", fixture("renamedApp.ts")]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("It exports: retries (number), service (RustStream app).");
  expect(missing.stderr).toContain("Fix: run the app it does export with --app service.");

  const wrong = await runCli(["run", fixture("renamedApp.ts"), "--app", "retries"]);
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toContain('exports "retries", but it is not a RustStream app');

  const cli = startCli(["run", fixture("renamedApp.ts"), "--app", "service"]);
  await cli.waitFor(/INFO {2}ready app=renamed version=1.0.0 subscribers=jobs/);
  cli.signal("SIGTERM");
  expect((await cli.exited).code).toBe(0);
});

test("a module that fails to load shows its own error; its place in the service's code is kept", async () => {
  const thrown = await runCli(["run", fixture("throwsOnLoad.ts")]);
  expect(thrown.code).toBe(1);
  expect(thrown.stderr).toContain("throwsOnLoad.ts failed to load:");
  expect(thrown.stderr).toContain(
    "Error: FIXTURE_MISSING_SETTING is not set: the fixture's own startup check",
  );
  // Node places the frame at `new`, Bun at the constructor's name after it.
  expect(thrown.stderr).toMatch(
    runtimeName() === "bun" ? /at .*throwsOnLoad\.ts:4:13/ : /at .*throwsOnLoad\.ts:4:9/,
  );
  // The loader's and the CLI's own frames are left out.
  expect(thrown.stderr).not.toMatch(/loadApp|node:internal/);

  // Written here, not kept as a fixture: the linter and the type checker would refuse the file.
  const dir = mkdtempSync(join(tmpdir(), "cli-syntax-"));
  const broken = join(dir, "syntaxError.ts");
  writeFileSync(broken, "// not TypeScript\nexport const app = {;\n");
  const syntax = await runCli(["run", broken]);
  rmSync(dir, { recursive: true, force: true });
  expect(syntax.code).toBe(1);
  // tsx (on Node) counts the column from 0, Bun from 1; Deno, which compiles the module itself,
  // shows its own message with the line and a mark under the column, then the place.
  const syntaxMessage = {
    node: /syntaxError\.ts:2:20: ERROR: Expected identifier but found ";"/,
    bun: /syntaxError\.ts:2:21: ERROR: Expected identifier but found ";"/,
    deno: /SyntaxError: Unexpected token `;`\. Expected identifier.*\n.*\n2 \| export const app = \{;\n.*\n\s+at file:\/\/.*syntaxError\.ts:2:21/,
  };
  expect(syntax.stderr).toMatch(syntaxMessage[runtimeName()]);

  const absent = await runCli(["run", "no/such/app.ts"]);
  expect(absent.code).toBe(1);
  expect(absent.stderr).toMatch(
    /no\/such\/app\.ts: no such file \(resolved to .*\); give the path/,
  );
});

test("startup that fails is logged and exits 1", async () => {
  const result = await runCli(["run", fixture("failingStart.ts")]);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    /ERROR startup failed error="subscriber \\"jobs\\": two subscribers share this name/,
  );
});

test("logs: readable lines by default, one JSON object per line with --log-format json, filtered by --log-level", async () => {
  const pretty = startCli(["run", fixture("memoryApp.ts")]);
  await pretty.waitFor(/INFO {2}ready app=greeter version=2.0.0 subscribers=greetings/);
  pretty.signal("SIGINT");
  expect((await pretty.exited).code).toBe(0);
  expect(pretty.stderr()).toMatch(/INFO {2}greeted subscriber=greetings to=world/);
  expect(pretty.stderr()).not.toContain("greeting (debug)");
  expect(pretty.stderr()).toMatch(/INFO {2}stopping reason="signal SIGINT"/);
  expect(pretty.stderr()).toMatch(/INFO {2}stopped failed=false aborted=false unflushed=0/);

  const json = startCli([
    "run",
    fixture("memoryApp.ts"),
    "--log-format",
    "json",
    "--log-level",
    "debug",
  ]);
  await json.waitFor(/"msg":"ready"/);
  json.signal("SIGTERM");
  expect((await json.exited).code).toBe(0);
  const lines = json
    .stderr()
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const byMessage = new Map(lines.map((line) => [line.msg, line]));
  expect(byMessage.get("greeting (debug)")).toMatchObject({
    level: "debug",
    subscriber: "greetings",
    to: "world",
  });
  expect(byMessage.get("greeting (warn)")).toMatchObject({ level: "warn", big: "10" });
  expect(byMessage.get("ready")).toMatchObject({ level: "info", app: "greeter", version: "2.0.0" });
  expect(byMessage.get("stopped")).toMatchObject({ failed: false, aborted: false });
  for (const line of lines) expect(Date.parse(line.time as string)).not.toBeNaN();

  const quiet = startCli(["run", fixture("memoryApp.ts"), "--log-level", "warn"]);
  await quiet.waitFor(/WARN {2}greeting \(warn\)/);
  quiet.signal("SIGTERM");
  expect((await quiet.exited).code).toBe(0);
  expect(quiet.stderr()).not.toMatch(/INFO/);
});

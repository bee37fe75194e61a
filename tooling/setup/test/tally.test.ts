import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tally } from "../tally.mjs";

// The closing tally must fail on everything a run can hide behind green test lines: a failed hook
// (vitest reports the tests under it as skipped), a file that does not load, an error thrown outside
// any test, a run with no report. These run a real vitest over small test files made for each case.
const here = dirname(fileURLToPath(import.meta.url));
const reporter = join(here, "..", "tallyReporter.mjs");
const vitestBin = join(
  dirname(createRequire(import.meta.url).resolve("vitest/package.json")),
  "vitest.mjs",
);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tally-"));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs vitest over `files` (name to source) in a folder of their own; returns the tally's answer. */
function run(name: string, files: Record<string, string>) {
  for (const [file, source] of Object.entries(files)) {
    writeFileSync(join(dir, `${name}-${file}`), source);
  }
  const reportPath = join(dir, `${name}.json`);
  const result = spawnSync(
    process.execPath,
    [vitestBin, "run", "--root", dir, `--reporter=${reporter}`, `${name}-`],
    { env: { ...process.env, RUSTSTREAM_TALLY_REPORT: reportPath }, encoding: "utf8" },
  );
  return tally([{ line: name, reportPath, status: result.status ?? 1 }]);
}

const header = 'import { beforeAll, describe, expect, it } from "vitest";\n';

describe("the closing tally", () => {
  it("passes a clean run and splits skips by their kind", () => {
    const result = run("clean", {
      "a.test.ts": `${header}
it("passes", () => expect(1).toBe(1));
it.skip("x (skipped, not built yet: transactions)", () => {});
it.skip("y (skipped, the broker cannot: requeue)", () => {});
it.skip("z (skipped, the broker cannot: seek)", () => {});
it.skip("set aside for another reason", () => {});`,
    });
    expect(result.ok).toBe(true);
    expect(result.lines[0]).toBe(
      "clean: 1 passed, 0 failed, 4 skipped (1 not built yet, 2 the broker cannot, 1 other)",
    );
  });

  it("counts the tests under a failed hook as not run, and names the hook's error", () => {
    const result = run("hook", {
      "a.test.ts": `${header}
describe("group", () => {
  beforeAll(() => { throw new Error("the broker is down"); });
  it("one", () => {});
  it("two", () => {});
});
it("outside", () => {});`,
    });
    expect(result.ok).toBe(false);
    expect(result.lines[0]).toBe(
      "hook: 1 passed, 0 failed, 2 not run (a hook or their file failed), 1 errors outside tests, 0 skipped",
    );
    expect(result.lines.join("\n")).toContain(
      "failed outside a test: hook-a.test.ts (group): Error: the broker is down",
    );
  });

  it("fails on a file that does not load", () => {
    const result = run("load", {
      "a.test.ts": `${header}import "./missing.js";\nit("never", () => {});`,
    });
    expect(result.ok).toBe(false);
    expect(result.lines.join("\n")).toMatch(
      /failed outside a test: load-a\.test\.ts \(the file\): .*missing\.js/,
    );
  });

  it("fails on an error thrown outside any test, though every test passed", () => {
    const result = run("unhandled", {
      "a.test.ts": `${header}
it("leaks", () => { setTimeout(() => { throw new Error("late"); }, 1); });
it("waits", async () => { await new Promise((r) => setTimeout(r, 50)); });`,
    });
    expect(result.ok).toBe(false);
    expect(result.lines[0]).toContain("2 passed, 0 failed, 1 errors outside tests");
    expect(result.lines.join("\n")).toContain("error outside any test: Error: late");
  });

  it("names each failed test with its first error line", () => {
    const result = run("failed", {
      "a.test.ts": `${header}describe("group", () => { it("wrong", () => expect(1).toBe(2)); });`,
    });
    expect(result.ok).toBe(false);
    expect(result.lines).toContain(
      "  failed: failed: failed-a.test.ts > group > wrong: AssertionError: expected 1 to be 2 // Object.is equality",
    );
  });

  it("fails a run that left no report", () => {
    const result = tally([{ line: "gone", reportPath: join(dir, "none.json"), status: 1 }]);
    expect(result.ok).toBe(false);
    expect(result.lines[0]).toContain("gone: no report");
  });
});

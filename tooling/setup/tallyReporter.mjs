// @ts-check
// A vitest reporter that writes what the closing tally needs, from vitest's own tree rather than
// its JSON report, which cannot show it: the error of a failed hook (vitest reports the tests under
// it as skipped), a file that did not load, and errors thrown outside any test (which leave every
// test passed). Written to the path in RUSTSTREAM_TALLY_REPORT; tooling/setup/tally.mjs reads it.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** @typedef {import("vitest/node").TestModule} TestModule */
/** @typedef {import("vitest/node").TestCase} TestCase */
/** @typedef {{ message?: string, name?: string, stack?: string }} SerializedError */

/**
 * What one run wrote: the file format tally.mjs reads.
 * @typedef {{ reason: string, passed: number, failed: number, pending: number,
 *   skipped: string[], notRun: number, failures: { file: string, name: string, error: string }[],
 *   outside: { file: string, where: string, error: string }[], unhandled: string[] }} TallyReport
 */

export default class TallyReporter {
  /**
   * @param {ReadonlyArray<TestModule>} testModules
   * @param {ReadonlyArray<SerializedError>} unhandledErrors
   * @param {string} reason
   */
  onTestRunEnd(testModules, unhandledErrors, reason) {
    const path = process.env.RUSTSTREAM_TALLY_REPORT;
    if (!path) return;
    /** @type {TallyReport} */
    const report = {
      reason,
      passed: 0,
      failed: 0,
      pending: 0,
      skipped: [],
      notRun: 0,
      failures: [],
      outside: [],
      unhandled: unhandledErrors.map(describe),
    };
    for (const module of testModules) {
      // The project's name first, where there is one: each project's files are named from its root.
      const project = module.project.name;
      const file = project ? `${project}: ${module.relativeModuleId}` : module.relativeModuleId;
      for (const error of module.errors()) {
        report.outside.push({ file, where: "the file", error: describe(error) });
      }
      for (const suite of module.children.allSuites()) {
        for (const error of suite.errors()) {
          report.outside.push({ file, where: suite.fullName, error: describe(error) });
        }
      }
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") report.passed++;
        // Vitest marks the tests under a failed hook (or in a file that failed) skipped: they are
        // failures that never ran, not skips.
        else if (result.state === "skipped" && underFailure(test)) report.notRun++;
        else if (result.state === "skipped") report.skipped.push(test.name);
        else if (result.state === "pending") report.pending++;
        else {
          report.failed++;
          const error = result.errors?.[0];
          report.failures.push({ file, name: test.fullName, error: error ? describe(error) : "" });
        }
      }
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(report));
  }
}

/** Whether a suite or the file above `test` failed on its own (a hook, the file's loading). */
function underFailure(/** @type {TestCase} */ test) {
  for (let parent = test.parent; ; parent = parent.parent) {
    if (parent.errors().length > 0) return true;
    if (parent.type === "module") return false;
  }
}

/** The first line that says what went wrong: the error's name and message, without colours. */
function describe(/** @type {SerializedError} */ error) {
  const text = error.message ? `${error.name ?? "Error"}: ${error.message}` : (error.stack ?? "");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI colour escapes
  const plain = text.replace(/\u001b\[[0-9;]*m/g, "");
  return (plain.split("\n").find((line) => line.trim() !== "") ?? "").trim().slice(0, 300);
}

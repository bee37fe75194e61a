// @ts-check
// The closing tally of `npm test`: one line per vitest run and one for them all, in the plain form CI
// prints last, then every failure named. Read from what tallyReporter.mjs wrote, so it counts what a
// green line could otherwise hide: a failed hook or a file that did not load (vitest reports the tests
// under it as skipped), an error thrown outside any test, a run that exited non-zero or left no
// report. Skips are split by why: the two kinds of absence a conformance declaration names in a
// skipped test's title (packages/testing/src/conformance/capabilities.ts), and the rest.
import { existsSync, readFileSync } from "node:fs";

/** The mark a skipped test's title carries for each kind of absence. */
const skipKinds = /** @type {const} */ ([
  ["not built yet", "(skipped, not built yet:"],
  ["the broker cannot", "(skipped, the broker cannot:"],
]);

/** How many failures the tally names one by one; the rest are counted. */
const namedFailures = 30;

/**
 * @typedef {import("./tallyReporter.mjs").TallyReport} TallyReport
 * @typedef {{ line: string, reportPath: string, status: number }} Run
 * @typedef {{ passed: number, failed: number, notRun: number, outside: number, skipped: number,
 *   kinds: Map<string, number> }} Counts
 */

/** @returns {Counts} */
function zero() {
  return { passed: 0, failed: 0, notRun: 0, outside: 0, skipped: 0, kinds: new Map() };
}

/**
 * The closing lines, and whether the runs passed: nothing failed in or outside a test, every run
 * finished, and every run exited 0.
 * @param {Run[]} runs
 * @returns {{ ok: boolean, lines: string[] }}
 */
export function tally(runs) {
  const total = zero();
  const lines = [];
  const named = [];
  let ok = true;
  for (const run of runs) {
    if (!existsSync(run.reportPath)) {
      ok = false;
      lines.push(`${run.line}: no report (${run.reportPath}): the run did not finish`);
      continue;
    }
    /** @type {TallyReport} */
    const report = JSON.parse(readFileSync(run.reportPath, "utf8"));
    const counts = countsOf(report);
    add(total, counts);
    lines.push(`${run.line}: ${summary(counts)}`);
    const at = `  ${run.line}:`;
    for (const f of report.failures) named.push(`${at} failed: ${f.file} > ${f.name}: ${f.error}`);
    for (const o of report.outside)
      named.push(`${at} failed outside a test: ${o.file} (${o.where}): ${o.error}`);
    for (const u of report.unhandled) named.push(`${at} error outside any test: ${u}`);
    if (report.pending > 0)
      named.push(`${at} ${report.pending} tests never finished (run ${report.reason})`);
    const clean =
      counts.failed === 0 && counts.notRun === 0 && counts.outside === 0 && report.pending === 0;
    if (run.status !== 0 && clean) {
      named.push(
        `${at} vitest exited with ${run.status} though every test finished: see its output above`,
      );
    }
    if (run.status !== 0 || !clean) ok = false;
  }
  lines.push(`vitest: ${summary(total)}${ok ? "" : " - FAILED"}`);
  if (named.length > namedFailures) {
    const rest = named.length - namedFailures;
    named.splice(namedFailures, rest, `  ... and ${rest} more (the reports are in .cache/)`);
  }
  return { ok, lines: [...lines, ...named] };
}

/** @param {TallyReport} report @returns {Counts} */
function countsOf(report) {
  const counts = zero();
  counts.passed = report.passed;
  counts.failed = report.failed;
  counts.notRun = report.notRun;
  counts.outside = report.outside.length + report.unhandled.length;
  counts.skipped = report.skipped.length;
  for (const title of report.skipped) {
    const kind = skipKinds.find(([, mark]) => title.includes(mark))?.[0] ?? "other";
    counts.kinds.set(kind, (counts.kinds.get(kind) ?? 0) + 1);
  }
  return counts;
}

/** @param {Counts} into @param {Counts} from */
function add(into, from) {
  into.passed += from.passed;
  into.failed += from.failed;
  into.notRun += from.notRun;
  into.outside += from.outside;
  into.skipped += from.skipped;
  for (const [kind, n] of from.kinds) into.kinds.set(kind, (into.kinds.get(kind) ?? 0) + n);
}

/** @param {Counts} c */
function summary(c) {
  const order = [...skipKinds.map(([kind]) => kind), "other"];
  const kinds = order
    .filter((kind) => (c.kinds.get(kind) ?? 0) > 0)
    .map((kind) => `${c.kinds.get(kind)} ${kind}`)
    .join(", ");
  const notRun = c.notRun > 0 ? `, ${c.notRun} not run (a hook or their file failed)` : "";
  const outside = c.outside > 0 ? `, ${c.outside} errors outside tests` : "";
  return `${c.passed} passed, ${c.failed} failed${notRun}${outside}, ${c.skipped} skipped${kinds ? ` (${kinds})` : ""}`;
}

// The report of one run: per scenario its counts, its faults with their times and recoveries, as
// JSON and as a plain table.
import type { FaultRecord } from "./timeline.js";

export interface ScenarioReport {
  readonly scenario: string;
  readonly seed: number;
  readonly messages: number;
  readonly lost: number;
  readonly duplicated: number;
  /** The most duplicates the mode's promise allows for the faults the scenario suffered. */
  readonly duplicateBound: number;
  readonly reordered: number;
  readonly orderPerKey: boolean;
  /** Handlings of messages never published: must be 0. */
  readonly unexpected: number;
  /** Distinct messages read from the dead letter (retry scenarios). */
  readonly deadLettered?: number;
  /**
   * Messages the dead letter holds more than once: must be 0, or at most `deadLetteredTwiceBound`
   * where the package documents its dead letters as at least once.
   */
  readonly deadLetteredTwice?: number;
  /** Where dead letters are at least once: the most that may come twice for the faults suffered. */
  readonly deadLetteredTwiceBound?: number;
  /** Messages dead-lettered that the retry plan never fails: must be 0 (where the cap counts handler runs only). */
  readonly deadLetteredOffPlan?: number;
  /** Messages a fault took out of the broker (a truncated file): gone, not counted lost. */
  readonly removedByFault?: number;
  readonly lostSample: readonly number[];
  /** What the scenario's own checks saw, in words (a file fault's counts). */
  readonly notes?: readonly string[];
  /** Where the mode promises its outputs exactly once: what the service produced, read back. */
  readonly outputs?: OutputsReport;
  readonly faults: readonly FaultRecord[];
  readonly longestPauseMs: number;
  /** Handlings (and dead-letter reads) in each second from the start: the chart's throughput. */
  readonly perSecond: readonly number[];
  readonly wallMs: number;
  /** Why it failed; empty when it passed. */
  readonly failures: readonly string[];
}

/** The outputs of an exactly-once mode: lost, duplicated, reordered and unexpected must be 0. */
export interface OutputsReport {
  /** Outputs read, duplicates included. */
  readonly read: number;
  readonly lost: number;
  readonly duplicated: number;
  /** Outputs first read after a later one of their key. */
  readonly reordered: number;
  readonly unexpected: number;
  readonly lostSample: readonly number[];
}

export interface RunReport {
  readonly profile: string;
  readonly seed: number;
  readonly startedAt: string;
  readonly wallMs: number;
  readonly scenarios: readonly ScenarioReport[];
}

/** What makes a scenario fail, in words. */
export function failuresOf(report: Omit<ScenarioReport, "failures">): string[] {
  const failures: string[] = [];
  if (report.lost > 0)
    failures.push(`${report.lost} lost (first: ${report.lostSample.join(", ")})`);
  if (report.reordered > 0) failures.push(`${report.reordered} out of order within a key`);
  if (report.duplicated > report.duplicateBound) {
    failures.push(`${report.duplicated} duplicates, over the bound of ${report.duplicateBound}`);
  }
  if (report.unexpected > 0)
    failures.push(`${report.unexpected} handlings of unpublished messages`);
  const twiceBound = report.deadLetteredTwiceBound ?? 0;
  if ((report.deadLetteredTwice ?? 0) > twiceBound) {
    failures.push(
      `${report.deadLetteredTwice} dead-lettered twice${twiceBound > 0 ? `, over the bound of ${twiceBound}` : ""}`,
    );
  }
  if ((report.deadLetteredOffPlan ?? 0) > 0)
    failures.push(`${report.deadLetteredOffPlan} dead-lettered that the plan never fails`);
  const out = report.outputs;
  if (out !== undefined) {
    if (out.lost > 0)
      failures.push(`${out.lost} outputs missing (first: ${out.lostSample.join(", ")})`);
    if (out.duplicated > 0) failures.push(`${out.duplicated} outputs produced twice`);
    if (out.reordered > 0) failures.push(`${out.reordered} outputs out of order within a key`);
    if (out.unexpected > 0) failures.push(`${out.unexpected} outputs of unpublished messages`);
  }
  return failures;
}

const seconds = (ms: number | null): string => (ms === null ? "-" : (ms / 1000).toFixed(2));

/** The run as plain text: one table of scenarios, then each scenario's faults. */
export function reportTable(run: RunReport): string {
  const header = [
    "scenario",
    "seed",
    "messages",
    "lost",
    "duplicated",
    "dup bound",
    "reordered",
    "dead-lettered",
    "DL twice",
    "longest pause s",
    "faults",
    "wall s",
    "result",
  ];
  const rows = run.scenarios.map((s) => [
    s.scenario,
    String(s.seed),
    String(s.messages),
    String(s.lost),
    String(s.duplicated),
    String(s.duplicateBound),
    s.orderPerKey ? String(s.reordered) : "n/a",
    s.deadLettered === undefined ? "-" : String(s.deadLettered),
    s.deadLetteredTwice === undefined
      ? "-"
      : `${s.deadLetteredTwice}${s.deadLetteredTwiceBound === undefined ? "" : ` (bound ${s.deadLetteredTwiceBound})`}`,
    seconds(s.longestPauseMs),
    String(s.faults.length),
    seconds(s.wallMs),
    s.failures.length === 0 ? "pass" : `FAIL: ${s.failures.join("; ")}`,
  ]);
  const lines = [
    `profile ${run.profile}, seed ${run.seed}, started ${run.startedAt}, ${seconds(run.wallMs)} s in all`,
    "",
    ...table(header, rows),
  ];
  for (const s of run.scenarios) {
    lines.push("");
    for (const note of s.notes ?? []) lines.push(`${s.scenario}: ${note}`);
    if (s.outputs !== undefined) {
      const o = s.outputs;
      lines.push(
        `${s.scenario}: outputs (exactly once): ${o.read} read, ${o.lost} missing, ${o.duplicated} twice, ${o.reordered} out of order, ${o.unexpected} unexpected`,
        "",
      );
    }
    lines.push(`${s.scenario}: faults`);
    lines.push(
      ...table(
        ["kind", "target", "at s", "healed s", "recovery s"],
        s.faults.map((f) => [
          f.kind,
          f.target,
          seconds(f.atMs),
          seconds(f.healedMs),
          seconds(f.recoveryMs),
        ]),
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const format = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [
    format(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.map(format),
  ];
}

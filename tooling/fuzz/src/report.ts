import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { Tally } from "./run.js";

export interface RunReport {
  readonly seed: number;
  readonly perTarget: number;
  readonly node: string;
  readonly cpus: number;
  readonly startedAt: string;
  readonly tallies: readonly Tally[];
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

/** The report as Markdown: one row per decoder, then every finding kept. */
export function markdown(report: RunReport): string {
  const lines = [
    "# Fuzz report",
    "",
    `Seed ${report.seed}, ${report.perTarget.toLocaleString("en")} generated inputs per decoder after its corpus; Node ${report.node} on ${report.cpus} cores; started ${report.startedAt}. \`pnpm fuzz --long --seed ${report.seed}\` draws the same inputs again.`,
    "",
    "Outcomes: *decoded* (a value, or an outcome with no damage), *typed error* (the package's own error, or a damaged outcome), *limit* (refused by a configured limit). Findings: *crash* (an error not the package's own), *hang* (over 250 ms + 2 µs a byte, and again when decoded a second time; *retimed* counts inputs over it once and under it the second time: the machine's pauses), *memory* (a decode holding more than the target's bound), *property* (whole and in pieces disagree, a message lost, a valid encoding not read back).",
    "",
    "| decoder | inputs | decoded | typed error | limit | crashes | hangs | memory | property | peak held by one decode (MiB) | peak RSS (MiB) | slowest (ms) | worst µs/byte, inputs of 64 KiB or more | retimed | time (s) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const t of report.tallies) {
    lines.push(
      `| ${t.target} | ${t.inputs.toLocaleString("en")} | ${t.outcomes.decoded.toLocaleString("en")} | ${t.outcomes["typed-error"].toLocaleString("en")} | ${t.outcomes.limit.toLocaleString("en")} | ${t.found.crash} | ${t.found.hang} | ${t.found.memory} | ${t.found.property} | ${mib(t.peakDecodeBytes)} | ${mib(t.peakRss)} | ${t.slowestMs.toFixed(0)} | ${t.worstMicrosPerByte.toFixed(2)} | ${t.retimed} | ${seconds(t.elapsedMs)} |`,
    );
  }
  lines.push("", "## Decoders", "");
  for (const t of report.tallies) lines.push(`- **${t.target}**: ${t.decoder}`);
  const findings = report.tallies.flatMap((t) =>
    t.findings.map((f) => ({ target: t.target, ...f })),
  );
  lines.push("", "## Findings", "");
  if (findings.length === 0) lines.push("None.");
  for (const f of findings) {
    lines.push(
      `- **${f.target}** ${f.kind}, input ${f.input}: ${f.detail.split("\n")[0]}`,
      `  \`${f.bytes.slice(0, 200)}\``,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** Writes `fuzz-report.md` and `fuzz-report.json` into `dir`; answers their paths. */
export function writeReport(dir: string, report: RunReport): string[] {
  mkdirSync(dir, { recursive: true });
  const md = join(dir, "fuzz-report.md");
  const json = join(dir, "fuzz-report.json");
  writeFileSync(md, markdown(report));
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return [md, json];
}

export function machineCpus(): number {
  return cpus().length;
}

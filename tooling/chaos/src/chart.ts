// The run as a picture: per scenario, a timeline of handlings per second with each fault drawn as a
// band from the moment it landed to its heal. An SVG, so it needs nothing to be made; chartPng.ts
// turns it into the PNG the long profile keeps.
import type { RunReport, ScenarioReport } from "./report.js";

const width = 1200;
const panelHeight = 210;
const left = 64;
const right = 16;
const plotTop = 46;
const plotHeight = 130;
const axisColor = "#555";
const throughputColor = "#2b6cb0";
/** Fault colours, given to kinds in the order they first appear in the run. */
const palette = ["#e53e3e", "#805ad5", "#dd6b20", "#2d3748", "#b7791f", "#38a169", "#d53f8c"];

const escapeXml = (text: string): string =>
  text.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c]!);

/** A tick step (seconds) that puts at most about a dozen ticks on the axis. */
function tickStep(seconds: number): number {
  return [5, 10, 20, 30, 60, 120, 300, 600].find((step) => seconds / step <= 12) ?? 1200;
}

/** Each fault kind of the run and its colour. */
export function faultColors(run: RunReport): Map<string, string> {
  const colors = new Map<string, string>();
  for (const scenario of run.scenarios) {
    for (const fault of scenario.faults) {
      if (!colors.has(fault.kind)) colors.set(fault.kind, palette[colors.size % palette.length]!);
    }
  }
  return colors;
}

function panel(scenario: ScenarioReport, top: number, colors: Map<string, string>): string {
  const seconds = Math.max(1, scenario.perSecond.length, Math.ceil(scenario.wallMs / 1000));
  const peak = Math.max(1, ...scenario.perSecond);
  const plotWidth = width - left - right;
  const x = (s: number) => left + (s / seconds) * plotWidth;
  const y = (rate: number) => top + plotTop + plotHeight - (rate / peak) * plotHeight;
  const bottom = top + plotTop + plotHeight;
  const parts: string[] = [];
  const verdict = scenario.failures.length === 0 ? "pass" : `FAIL: ${scenario.failures.join("; ")}`;
  parts.push(
    `<text x="${left}" y="${top + 18}" font-size="14" font-weight="bold">${escapeXml(scenario.scenario)} (seed ${scenario.seed})</text>`,
    `<text x="${left}" y="${top + 36}" font-size="12">${scenario.messages} messages, ${scenario.lost} lost, ${scenario.duplicated} duplicated (bound ${scenario.duplicateBound}), ${scenario.orderPerKey ? `${scenario.reordered} reordered` : "order n/a"}, longest pause ${(scenario.longestPauseMs / 1000).toFixed(2)} s: ${escapeXml(verdict)}</text>`,
  );
  // A step line: each second's count held across its second.
  const points = [`${x(0).toFixed(1)},${bottom}`];
  scenario.perSecond.forEach((count, second) => {
    points.push(`${x(second).toFixed(1)},${y(count).toFixed(1)}`);
    points.push(`${x(second + 1).toFixed(1)},${y(count).toFixed(1)}`);
  });
  points.push(`${x(scenario.perSecond.length).toFixed(1)},${bottom}`);
  parts.push(
    `<polygon class="throughput" points="${points.join(" ")}" fill="${throughputColor}" fill-opacity="0.55" stroke="${throughputColor}" stroke-width="1"/>`,
  );
  // Over the throughput, translucent: what the service did during a fault shows through.
  for (const fault of scenario.faults) {
    const from = x(fault.atMs / 1000);
    const to = Math.max(from + 2, x(fault.healedMs / 1000));
    const recovery =
      fault.recoveryMs === null ? "none" : `${(fault.recoveryMs / 1000).toFixed(2)} s`;
    parts.push(
      `<rect class="fault" data-kind="${escapeXml(fault.kind)}" x="${from.toFixed(1)}" y="${top + plotTop}" width="${(to - from).toFixed(1)}" height="${plotHeight}" fill="${colors.get(fault.kind)}" fill-opacity="0.35"><title>${escapeXml(fault.kind)} on ${escapeXml(fault.target)} at ${(fault.atMs / 1000).toFixed(2)} s, healed ${(fault.healedMs / 1000).toFixed(2)} s, recovery ${recovery}</title></rect>`,
    );
  }
  parts.push(
    `<line x1="${left}" y1="${bottom}" x2="${width - right}" y2="${bottom}" stroke="${axisColor}"/>`,
    `<line x1="${left}" y1="${top + plotTop}" x2="${left}" y2="${bottom}" stroke="${axisColor}"/>`,
    `<text x="${left - 6}" y="${top + plotTop + 4}" font-size="11" text-anchor="end">${peak}/s</text>`,
    `<text x="${left - 6}" y="${bottom}" font-size="11" text-anchor="end">0</text>`,
  );
  const step = tickStep(seconds);
  for (let s = 0; s <= seconds; s += step) {
    parts.push(
      `<line x1="${x(s).toFixed(1)}" y1="${bottom}" x2="${x(s).toFixed(1)}" y2="${bottom + 4}" stroke="${axisColor}"/>`,
      `<text x="${x(s).toFixed(1)}" y="${bottom + 16}" font-size="11" text-anchor="middle">${s} s</text>`,
    );
  }
  return parts.join("\n");
}

/** The whole run: a legend of the fault kinds, then one panel per scenario. */
export function timelineSvg(run: RunReport): string {
  const colors = faultColors(run);
  const legendHeight = 40;
  const height = legendHeight + panelHeight * run.scenarios.length;
  const legend = [
    `<text x="${left}" y="18" font-size="13">profile ${run.profile}, seed ${run.seed}, ${run.startedAt}: handlings per second, faults as bands from landing to heal</text>`,
  ];
  let at = left;
  for (const [kind, color] of colors) {
    legend.push(
      `<rect x="${at}" y="26" width="12" height="10" fill="${color}" fill-opacity="0.6"/>`,
      `<text x="${at + 16}" y="35" font-size="11">${escapeXml(kind)}</text>`,
    );
    at += 24 + kind.length * 7;
  }
  const panels = run.scenarios.map((s, i) => panel(s, legendHeight + i * panelHeight, colors));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...legend,
    ...panels,
    "</svg>",
    "",
  ].join("\n");
}

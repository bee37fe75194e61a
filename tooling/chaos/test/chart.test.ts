import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchHeadless } from "@ruststream/tooling-browser";
import { afterAll, describe, expect, it } from "vitest";
import { faultColors, timelineSvg } from "../src/chart.js";
import { writeChartPng } from "../src/chartPng.js";
import type { RunReport, ScenarioReport } from "../src/report.js";

const scenario = (name: string, faults: ScenarioReport["faults"]): ScenarioReport => ({
  scenario: name,
  seed: 7,
  messages: 300,
  lost: 0,
  duplicated: 2,
  duplicateBound: 64,
  reordered: 0,
  orderPerKey: true,
  unexpected: 0,
  lostSample: [],
  faults,
  longestPauseMs: 2_100,
  perSecond: [50, 100, 0, 0, 80, 70],
  wallMs: 6_000,
  failures: [],
});

const run: RunReport = {
  profile: "long",
  seed: 99,
  startedAt: "2026-12-03T00:00:00.000Z",
  wallMs: 12_000,
  scenarios: [
    scenario("first", [
      { kind: "kill", target: "replica 0", atMs: 1_500, healedMs: 3_000, recoveryMs: 900 },
      { kind: "cut", target: "proxy", atMs: 4_200, healedMs: 4_800, recoveryMs: 10 },
    ]),
    scenario("second", [
      { kind: "cut", target: "proxy", atMs: 600, healedMs: 1_200, recoveryMs: null },
    ]),
  ],
};

const dir = mkdtempSync(join(tmpdir(), "chaos-chart-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the chart", () => {
  it("gives each fault kind one colour across the run", () => {
    const colors = faultColors(run);
    expect([...colors.keys()]).toEqual(["kill", "cut"]);
    expect(colors.get("kill")).not.toBe(colors.get("cut"));
  });

  it("draws, in a browser, one band per fault where it landed, as wide as it lasted", async () => {
    const browser = await launchHeadless("the chaos chart test");
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 500 } });
      await page.setContent(`<!doctype html><body style="margin:0">${timelineSvg(run)}</body>`);
      const bands = await page.$$eval("rect.fault", (rects) =>
        rects.map((r) => {
          const box = r.getBoundingClientRect();
          return { kind: r.getAttribute("data-kind"), x: box.x, width: box.width, y: box.y };
        }),
      );
      expect(bands.map((b) => b.kind)).toEqual(["kill", "cut", "cut"]);
      // Six seconds over 1,120 pixels of plot from x = 64: a second is 186.7 pixels.
      const second = (1200 - 64 - 16) / 6;
      expect(bands[0]!.x).toBeCloseTo(64 + 1.5 * second, 0);
      expect(bands[0]!.width).toBeCloseTo(1.5 * second, 0);
      expect(bands[1]!.x).toBeCloseTo(64 + 4.2 * second, 0);
      // The second scenario's band sits in the panel below the first's.
      expect(bands[2]!.y).toBeGreaterThan(bands[1]!.y + 150);
      const text = await page.textContent("svg");
      expect(text).toContain("first (seed 7)");
      expect(text).toContain("300 messages, 0 lost, 2 duplicated (bound 64), 0 reordered");
    } finally {
      await browser.close();
    }
  }, 60_000);

  it("writes a PNG of the chart's size", async () => {
    const path = join(dir, "chart.png");
    await writeChartPng(timelineSvg(run), path);
    const png = readFileSync(path);
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    // IHDR: width and height, big-endian, at bytes 16 and 20.
    expect(png.readUInt32BE(16)).toBe(1200);
    expect(png.readUInt32BE(20)).toBe(40 + 2 * 210);
  }, 60_000);
});

import { describe, expect, it } from "vitest";
import { failuresOf, reportTable, type ScenarioReport } from "../src/report.js";

const clean: Omit<ScenarioReport, "failures"> = {
  scenario: "s",
  seed: 1,
  messages: 100,
  lost: 0,
  duplicated: 3,
  duplicateBound: 10,
  reordered: 0,
  orderPerKey: true,
  unexpected: 0,
  lostSample: [],
  faults: [{ kind: "kill", target: "replica 0", atMs: 1000, healedMs: 2500, recoveryMs: 120 }],
  longestPauseMs: 1400,
  perSecond: [10, 12, 0, 9],
  wallMs: 9000,
};

describe("what fails a scenario", () => {
  it("nothing, when nothing was lost or reordered and duplicates stay within the bound", () => {
    expect(failuresOf(clean)).toEqual([]);
  });

  it("a loss, a reorder, duplicates over the bound, an unexpected handling, a second dead letter", () => {
    expect(
      failuresOf({
        ...clean,
        lost: 2,
        lostSample: [4, 9],
        reordered: 1,
        duplicated: 11,
        unexpected: 1,
        deadLettered: 5,
        deadLetteredTwice: 1,
      }),
    ).toEqual([
      "2 lost (first: 4, 9)",
      "1 out of order within a key",
      "11 duplicates, over the bound of 10",
      "1 handlings of unpublished messages",
      "1 dead-lettered twice",
    ]);
  });
});

describe("dead letters", () => {
  const retried = { ...clean, deadLettered: 5, deadLetteredTwice: 0, deadLetteredOffPlan: 0 };

  it("where they are at least once, pass twice up to the bound and fail past it", () => {
    expect(failuresOf({ ...retried, deadLetteredTwice: 3, deadLetteredTwiceBound: 3 })).toEqual([]);
    expect(failuresOf({ ...retried, deadLetteredTwice: 4, deadLetteredTwiceBound: 3 })).toEqual([
      "4 dead-lettered twice, over the bound of 3",
    ]);
  });

  it("fail when one the plan never fails was dead-lettered", () => {
    expect(failuresOf({ ...retried, deadLetteredOffPlan: 2 })).toEqual([
      "2 dead-lettered that the plan never fails",
    ]);
  });

  it("show their bound in the table where there is one", () => {
    const table = reportTable({
      profile: "ci",
      seed: 1,
      startedAt: "2026-01-01T00:00:00.000Z",
      wallMs: 9000,
      scenarios: [
        { ...retried, deadLetteredTwice: 2, deadLetteredTwiceBound: 160, failures: [] },
        { ...retried, scenario: "t", failures: [] },
      ],
    });
    expect(table).toContain("| 2 (bound 160) |");
    // Without a bound, the count alone: none may come twice.
    expect(table.split("\n").find((line) => line.startsWith("| t "))).not.toContain("bound");
  });
});

describe("an exactly-once mode's outputs", () => {
  const outputs = {
    read: 100,
    lost: 0,
    duplicated: 0,
    reordered: 0,
    unexpected: 0,
    lostSample: [],
  };

  it("pass when each came once, in its key's order, while the handlings may repeat", () => {
    expect(failuresOf({ ...clean, outputs })).toEqual([]);
  });

  it("fail when one is missing, produced twice, out of order or never published", () => {
    expect(
      failuresOf({
        ...clean,
        outputs: {
          read: 101,
          lost: 1,
          duplicated: 2,
          reordered: 1,
          unexpected: 1,
          lostSample: [7],
        },
      }),
    ).toEqual([
      "1 outputs missing (first: 7)",
      "2 outputs produced twice",
      "1 outputs out of order within a key",
      "1 outputs of unpublished messages",
    ]);
  });

  it("show in the plain table under the scenario", () => {
    const text = reportTable({
      profile: "ci",
      seed: 7,
      startedAt: "2026-01-01T00:00:00.000Z",
      wallMs: 10_000,
      scenarios: [{ ...clean, outputs, failures: [] }],
    });
    expect(text).toContain(
      "s: outputs (exactly once): 100 read, 0 missing, 0 twice, 0 out of order, 0 unexpected",
    );
  });
});

describe("the plain table", () => {
  it("has a row per scenario with its counts and a row per fault with its recovery", () => {
    const text = reportTable({
      profile: "ci",
      seed: 7,
      startedAt: "2026-01-01T00:00:00.000Z",
      wallMs: 10_000,
      scenarios: [{ ...clean, failures: [] }],
    });
    expect(text).toContain("profile ci, seed 7");
    expect(text).toMatch(
      /\| s +\| 1 +\| 100 +\| 0 +\| 3 +\| 10 +\| 0 +\| - +\| - +\| 1\.40 +\| 1 +\| 9\.00 +\| pass +\|/,
    );
    expect(text).toMatch(/\| kill +\| replica 0 +\| 1\.00 +\| 2\.50 +\| 0\.12 +\|/);
  });

  it("prints a scenario's notes, its own checks' counts, above its faults", () => {
    const text = reportTable({
      profile: "ci",
      seed: 7,
      startedAt: "2026-01-01T00:00:00.000Z",
      wallMs: 10_000,
      scenarios: [{ ...clean, notes: ["disk filled 2 times"], failures: [] }],
    });
    const lines = text.split("\n");
    const note = lines.indexOf("s: disk filled 2 times");
    expect(note).toBeGreaterThan(0);
    expect(lines[note + 1]).toBe("s: faults");
  });
});

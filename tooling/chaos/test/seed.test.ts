import { describe, expect, it } from "vitest";
import { parseArgs } from "../src/args.js";
import { faultSchedule } from "../src/faults/schedule.js";
import { plannedMessages } from "../src/load.js";
import { scenarioSeed, seededRandom } from "../src/random.js";

const options = {
  kinds: ["kill", "cut", "stall"] as const,
  count: 6,
  windowMs: 20_000,
  minDurationMs: 300,
  maxDurationMs: 1_500,
  replicas: 2,
};

describe("a seed", () => {
  it("gives the same fault schedule and the same keys every time", () => {
    const run = (seed: number) => {
      const random = seededRandom(seed);
      return { faults: faultSchedule(random, options), messages: plannedMessages(random, 50, 8) };
    };
    expect(run(42)).toEqual(run(42));
    expect(run(42)).not.toEqual(run(43));
  });

  it("mixes the scenario's name in, so scenarios get different schedules from one run seed", () => {
    expect(scenarioSeed(7, "file-kill")).toBe(scenarioSeed(7, "file-kill"));
    expect(scenarioSeed(7, "file-kill")).not.toBe(scenarioSeed(7, "redis-stream-proxy"));
    expect(scenarioSeed(7, "file-kill")).not.toBe(scenarioSeed(8, "file-kill"));
  });

  it("draws numbers in [0, 1) and whole numbers within their bounds", () => {
    const random = seededRandom(1);
    for (let i = 0; i < 1000; i++) {
      const n = random.next();
      expect(n >= 0 && n < 1).toBe(true);
      const k = random.int(3, 5);
      expect(k >= 3 && k <= 5 && Number.isInteger(k)).toBe(true);
    }
  });
});

describe("the fault schedule", () => {
  it("spreads the faults over the window, one after another, never overlapping", () => {
    const faults = faultSchedule(seededRandom(9), options);
    expect(faults).toHaveLength(6);
    for (const [i, fault] of faults.entries()) {
      expect(fault.atMs).toBeGreaterThanOrEqual(0);
      expect(fault.durationMs).toBeGreaterThanOrEqual(options.minDurationMs);
      expect(fault.durationMs).toBeLessThanOrEqual(options.maxDurationMs);
      const next = faults[i + 1];
      if (next !== undefined) expect(fault.atMs + fault.durationMs).toBeLessThanOrEqual(next.atMs);
      expect(fault.atMs + fault.durationMs).toBeLessThanOrEqual(options.windowMs);
      expect(fault.replica === 0 || fault.replica === 1).toBe(true);
    }
  });

  it("refuses more faults than the window holds, naming the fix", () => {
    expect(() => faultSchedule(seededRandom(1), { ...options, count: 100 })).toThrow(
      /fewer faults/,
    );
  });
});

describe("the command line", () => {
  it("takes the profile, the seed and the scenarios, and draws a seed when none is given", () => {
    const args = parseArgs(
      ["--profile", "long", "--seed", "12", "--scenario", "file-kill"],
      () => 5,
    );
    expect(args.profile.name).toBe("long");
    expect(args.seed).toBe(12);
    expect(args.scenarios).toEqual(["file-kill"]);
    expect(parseArgs([], () => 5)).toMatchObject({ seed: 5, scenarios: [] });
    expect(parseArgs([], () => 5).profile.messages).toBe(10_000);
  });

  it("draws the PNG chart for the long profile, and for another only when asked", () => {
    expect(parseArgs([], () => 5).png).toBe(false);
    expect(parseArgs(["--png"], () => 5).png).toBe(true);
    expect(parseArgs(["--profile", "long"], () => 5).png).toBe(true);
    expect(parseArgs(["--png", "--seed", "3"], () => 5)).toMatchObject({ png: true, seed: 3 });
  });

  it("refuses an unknown profile and a seed that is not a whole number", () => {
    expect(() => parseArgs(["--profile", "short"], () => 1)).toThrow(/ci or long/);
    expect(() => parseArgs(["--seed", "1.5"], () => 1)).toThrow(/whole number/);
  });
});

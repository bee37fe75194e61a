import { describe, expect, it } from "vitest";
import { longestPause, recoveryAfter } from "../src/timeline.js";

describe("the timeline", () => {
  const times = [0, 10, 20, 500, 510, 2000];

  it("finds the longest gap between two handlings in a row", () => {
    expect(longestPause(times)).toBe(1490);
    expect(longestPause([])).toBe(0);
  });

  it("measures recovery from a heal to the first handling after it", () => {
    expect(recoveryAfter(times, 25)).toBe(475);
    expect(recoveryAfter(times, 500)).toBe(0);
    expect(recoveryAfter(times, 2001)).toBe(null);
  });
});

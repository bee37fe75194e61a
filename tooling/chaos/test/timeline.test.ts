import { describe, expect, it } from "vitest";
import { longestPause, perSecond, recoveryAfter } from "../src/timeline.js";

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

  it("counts the handlings in each second from the start, empty seconds as 0", () => {
    expect(perSecond(times)).toEqual([5, 0, 1]);
    expect(perSecond([10, 2_500, 2_999, 4_000])).toEqual([1, 0, 2, 0, 1]);
    expect(perSecond([])).toEqual([]);
  });
});

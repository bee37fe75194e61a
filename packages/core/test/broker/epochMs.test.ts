import { describe, expect, it } from "vitest";
import { epochMs } from "../../src/broker/epochMs.js";

describe("epochMs", () => {
  it("answers a Date's or a number's milliseconds since the epoch", () => {
    expect(epochMs("a time position", new Date(1_700_000_000_123))).toBe(1_700_000_000_123);
    expect(epochMs("a time position", 0)).toBe(0);
  });

  it.each([
    ["a negative number", -1],
    ["a fraction", 1.5],
    ["NaN", Number.NaN],
    ["an invalid Date", new Date("not a date")],
  ])("refuses %s, naming what it was for", (_, time) => {
    expect(() => epochMs("a JetStream time position", time)).toThrowError(
      expect.objectContaining({
        code: "invalid-argument",
        message: expect.stringContaining("a JetStream time position needs whole milliseconds"),
      }),
    );
  });
});

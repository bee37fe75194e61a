import { describe, expect, it } from "vitest";
import { positive } from "../../src/brokerEntry.js";
import { isRustStreamError } from "../../src/index.js";

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    return isRustStreamError(error) ? error.code : "not a RustStreamError";
  }
  return undefined;
}

describe("positive", () => {
  it("answers the fallback when unset and the value when it is a whole number, 1 or more", () => {
    expect(positive("count", undefined, 64)).toBe(64);
    expect(positive("count", 1, 64)).toBe(1);
    expect(positive("count", 5000, 64)).toBe(5000);
  });

  it("refuses 0, a negative, a fraction, NaN and a string, naming the option", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, "3" as unknown as number]) {
      expect(codeOf(() => positive("blockMs", bad, 1))).toBe("invalid-argument");
    }
    expect(() => positive("blockMs", 0, 1)).toThrow("blockMs: 0; give a whole number, 1 or more");
  });
});

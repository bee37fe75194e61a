import { describe, expect, it } from "vitest";
import { SettleWatermark } from "../src/brokerEntry.js";
import { isRustStreamError } from "../src/index.js";

// The watermark the file broker's named consumers and Kafka's tracked commits store: the first
// offset handed out and not settled, one past the highest handed out when none is open, moving only
// forward, never held back by offsets that were never handed out.

function handedOut(...offsets: bigint[]): SettleWatermark {
  const w = new SettleWatermark();
  for (const o of offsets) w.delivered(o);
  return w;
}

describe("SettleWatermark", () => {
  it("moves over a settled prefix only, whatever order the settles come in", () => {
    const w = handedOut(0n, 1n, 2n, 3n);
    expect(w.settle(2n)).toBeUndefined();
    expect(w.settle(3n)).toBeUndefined();
    expect(w.settle(0n)).toBe(1n);
    expect(w.settle(1n)).toBe(4n);
  });

  it("answers the first open offset across gaps in the log, not one past the last settled", () => {
    const w = handedOut(10n, 14n, 15n, 40n);
    expect(w.settle(14n)).toBeUndefined();
    expect(w.settle(10n)).toBe(15n);
    expect(w.settle(15n)).toBe(40n);
    expect(w.settle(40n)).toBe(41n);
  });

  it("is pinned by a delivery left open (a requeued one) while every later one settles", () => {
    const w = new SettleWatermark();
    for (let o = 0n; o < 3000n; o++) w.delivered(o);
    const moved: bigint[] = [];
    for (let o = 1n; o < 3000n; o++) {
      const position = w.settle(o);
      if (position !== undefined) moved.push(position);
    }
    expect(moved).toEqual([]);
    expect(w.settle(0n)).toBe(3000n);
  });

  it("keeps its answers right past the point where it compacts what it popped", () => {
    const w = new SettleWatermark();
    for (let o = 0n; o < 5000n; o++) w.delivered(o);
    // In order up to 2999 (compacting on the way), then the rest out of order in pairs.
    for (let o = 0n; o < 3000n; o++) expect(w.settle(o)).toBe(o + 1n);
    for (let o = 3000n; o < 5000n; o += 2n) {
      expect(w.settle(o + 1n)).toBeUndefined();
      expect(w.settle(o)).toBe(o + 2n);
    }
  });

  it("answers nothing for the first offset handed out alone being open, nor twice the same", () => {
    const w = handedOut(7n, 8n);
    expect(w.settle(8n)).toBeUndefined();
    expect(w.settle(8n)).toBeUndefined();
    expect(w.settle(7n)).toBe(9n);
    expect(w.settle(7n)).toBeUndefined();
  });

  it("ignores a settle of an offset never handed out", () => {
    const w = handedOut(0n, 1n);
    expect(w.settle(5n)).toBeUndefined();
    expect(new SettleWatermark().settle(0n)).toBeUndefined();
    expect(w.settle(0n)).toBe(1n);
  });

  it("refuses a hand-out that does not run ahead, naming the fix", () => {
    const w = handedOut(5n);
    expect(w.ahead(6n)).toBe(true);
    expect(w.ahead(5n)).toBe(false);
    let caught: unknown;
    try {
      w.delivered(3n);
    } catch (error) {
      caught = error;
    }
    expect(isRustStreamError(caught) && caught.code).toBe("invalid-argument");
    expect((caught as Error).message).toMatch(/start a new watermark/);
  });
});

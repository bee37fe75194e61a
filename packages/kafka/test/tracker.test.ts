import { describe, expect, it } from "vitest";
import { Tracker } from "../src/topic/tracker.js";

// The watermark behind tracked commits, on its own: the position to store is the first offset
// handed out and not settled (one past the highest handed out when none is open), it only moves
// forward, gaps in the offsets never hold it back, and a settle of books closed since (an older
// generation) is dropped.

describe("the tracked watermark", () => {
  it("advances over a contiguous prefix only, whatever order settles come in", () => {
    const t = new Tracker();
    const b = t.reset("p");
    for (const o of [0n, 1n, 2n, 3n]) expect(t.delivered("p", o)).toBe(b);
    expect(b.settle(2n)).toBeUndefined();
    expect(b.settle(3n)).toBeUndefined();
    expect(b.settle(0n)).toBe(1n);
    expect(b.settle(1n)).toBe(4n);
  });

  it("skips offsets never handed out (transaction markers, compacted records)", () => {
    const t = new Tracker();
    const b = t.reset("p");
    for (const o of [10n, 14n, 15n, 40n]) t.delivered("p", o);
    expect(b.settle(14n)).toBeUndefined();
    expect(b.settle(10n)).toBe(15n);
    expect(b.settle(15n)).toBe(40n);
    expect(b.settle(40n)).toBe(41n);
  });

  it("holds at a delivery left open (a requeue pins it) while later ones settle", () => {
    const t = new Tracker();
    const b = t.reset("p");
    for (let o = 0n; o < 100n; o++) t.delivered("p", o);
    const stored: bigint[] = [];
    for (let o = 1n; o < 100n; o++) {
      const position = b.settle(o);
      if (position !== undefined) stored.push(position);
    }
    expect(stored).toEqual([]);
    expect(b.settle(0n)).toBe(100n);
  });

  it("drops the settles of books closed since (after a seek, a revocation)", () => {
    const t = new Tracker();
    const old = t.reset("p");
    t.delivered("p", 0n);
    t.delivered("p", 1n);
    const fresh = t.reset("p");
    expect(old.open).toBe(false);
    expect(old.settle(0n)).toBeUndefined();
    expect(t.delivered("p", 0n)).toBe(fresh);
    expect(fresh.open).toBe(true);
    expect(fresh.settle(0n)).toBe(1n);
    t.forget("p");
    expect(fresh.open).toBe(false);
    expect(fresh.settle(1n)).toBeUndefined();
  });

  it("starts over when a partition replays without a seek of ours", () => {
    const t = new Tracker();
    const first = t.reset("p");
    t.delivered("p", 5n);
    const replayed = t.delivered("p", 3n);
    expect(replayed).not.toBe(first);
    expect(first.open).toBe(false);
    expect(replayed.settle(3n)).toBe(4n);
  });

  it("keeps partitions apart", () => {
    const t = new Tracker();
    const a = t.reset("a");
    const b = t.reset("b");
    t.delivered("a", 0n);
    t.delivered("b", 0n);
    t.delivered("b", 1n);
    expect(b.settle(1n)).toBeUndefined();
    expect(a.settle(0n)).toBe(1n);
    expect(b.settle(0n)).toBe(2n);
  });
});

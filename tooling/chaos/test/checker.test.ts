import { describe, expect, it } from "vitest";
import { check, checkPerReplica, type Handled, type Published } from "../src/checker.js";

const published: Published[] = [
  { key: "a", seq: 0 },
  { key: "b", seq: 1 },
  { key: "a", seq: 2 },
  { key: "b", seq: 3 },
  { key: "a", seq: 4 },
];

describe("the checker", () => {
  it("counts nothing when every message was handled once, in order per key", () => {
    const result = check(published, published, { orderPerKey: true });
    expect(result).toMatchObject({
      messages: 5,
      lost: 0,
      duplicated: 0,
      reordered: 0,
      unexpected: 0,
    });
  });

  it("counts a message never handled as lost, and names it", () => {
    const handled = published.filter((m) => m.seq !== 3);
    const result = check(published, handled, { orderPerKey: true });
    expect(result.lost).toBe(1);
    expect(result.lostSample).toEqual([3]);
  });

  it("does not count as lost what was settled elsewhere (dead-lettered)", () => {
    const handled = published.filter((m) => m.seq !== 3);
    const result = check(published, handled, { orderPerKey: true, settledElsewhere: new Set([3]) });
    expect(result.lost).toBe(0);
  });

  it("counts a redelivery after a crash as a duplicate, not as out of order", () => {
    // a0, a2 handled; crash; a2 (again), a4.
    const handled = [
      published[0],
      published[1],
      published[2],
      published[2],
      published[3],
      published[4],
    ];
    const result = check(published, handled as Published[], { orderPerKey: true });
    expect(result.duplicated).toBe(1);
    expect(result.reordered).toBe(0);
  });

  it("counts a message first handled after a later one of its key as reordered", () => {
    // a4 before a2: a2's first handling comes after a later message of key a.
    const handled = [published[0], published[1], published[4], published[3], published[2]];
    const result = check(published, handled as Published[], { orderPerKey: true });
    expect(result.reordered).toBe(1);
    expect(result.lost).toBe(0);
  });

  it("orders handlings by when the services handled them, not by when the runner read them", () => {
    // [index in published, when handled], in the order the runner read them.
    const handledAt = (reads: [number, number][]): Handled[] =>
      reads.map(([i, at]) => ({ ...(published[i] as Published), at }));
    // Read a4 before a2 (two replicas' pipes), handled a2 first: in order.
    const early = handledAt([
      [0, 10],
      [1, 20],
      [4, 50],
      [3, 40],
      [2, 30],
    ]);
    expect(check(published, early, { orderPerKey: true }).reordered).toBe(0);
    // Handled a4 before a2: reordered, whatever the order they were read in.
    const late = handledAt([
      [0, 10],
      [1, 20],
      [2, 60],
      [3, 40],
      [4, 50],
    ]);
    expect(check(published, late, { orderPerKey: true }).reordered).toBe(1);
  });

  it("reports no reorder where the mode promises no order per key", () => {
    const handled = [published[4], published[3], published[2], published[1], published[0]];
    const result = check(published, handled as Published[], { orderPerKey: false });
    expect(result.reordered).toBe(0);
  });

  it("counts a handling of a message never published (or under another key) as unexpected", () => {
    const handled = [...published, { key: "c", seq: 99 }, { key: "b", seq: 0 }];
    const result = check(published, handled, { orderPerKey: true });
    expect(result.unexpected).toBe(2);
    expect(result.duplicated).toBe(0);
  });
});

describe("the checker under a fan-out (every replica given every message)", () => {
  const by = (replica: number, seqs: readonly number[]): Handled[] =>
    published.filter((m) => seqs.includes(m.seq)).map((m) => ({ ...m, replica }));
  const none = (): ReadonlySet<number> => new Set();

  it("counts nothing when each replica handled every message once", () => {
    const handled = [...by(0, [0, 1, 2, 3, 4]), ...by(1, [0, 1, 2, 3, 4])];
    const result = checkPerReplica(published, handled, 2, {
      orderPerKey: false,
      settledElsewhere: none,
    });
    expect(result).toMatchObject({ messages: 5, lost: 0, duplicated: 0, unexpected: 0 });
  });

  it("counts a message one replica missed as lost, though the other handled it", () => {
    const handled = [...by(0, [0, 1, 2, 3, 4]), ...by(1, [0, 1, 2, 4])];
    const result = checkPerReplica(published, handled, 2, {
      orderPerKey: false,
      settledElsewhere: none,
    });
    expect(result.lost).toBe(1);
    expect(result.lostSample).toEqual([3]);
  });

  it("excuses a replica only what a fault took from that replica", () => {
    const handled = [...by(0, [0, 1, 2, 4]), ...by(1, [0, 1, 2, 4])];
    const result = checkPerReplica(published, handled, 2, {
      orderPerKey: false,
      settledElsewhere: (replica) => new Set(replica === 0 ? [3] : []),
    });
    expect(result.lost).toBe(1);
    expect(result.lostSample).toEqual([3]);
  });

  it("counts a message handled twice by one replica as a duplicate, and a handling by no replica of the run as unexpected", () => {
    const handled = [
      ...by(0, [0, 1, 2, 3, 4]),
      ...by(0, [2]),
      ...by(1, [0, 1, 2, 3, 4]),
      ...by(2, [1]),
    ];
    const result = checkPerReplica(published, handled, 2, {
      orderPerKey: false,
      settledElsewhere: none,
    });
    expect(result).toMatchObject({ lost: 0, duplicated: 1, unexpected: 1 });
  });
});

import { describe, expect, it } from "vitest";
import { InflightSequences } from "../src/memory/inflightSequences.js";

/** The oldest by a scan of what is in flight: what the structure must always agree with. */
function scanOldest(members: Set<bigint>): bigint | undefined {
  let oldest: bigint | undefined;
  for (const s of members) if (oldest === undefined || s < oldest) oldest = s;
  return oldest;
}

describe("InflightSequences", () => {
  it("answers the oldest in flight as deliveries go out and settle in order", () => {
    const inflight = new InflightSequences();
    expect(inflight.oldest()).toBeUndefined();
    for (let s = 0n; s < 5n; s++) inflight.add(s);
    expect(inflight.oldest()).toBe(0n);
    expect(inflight.delete(0n)).toBe(true);
    expect(inflight.delete(0n)).toBe(false);
    expect(inflight.delete(2n)).toBe(true);
    expect(inflight.oldest()).toBe(1n);
    inflight.delete(1n);
    expect(inflight.oldest()).toBe(3n);
    expect(inflight.size).toBe(2);
    inflight.clear();
    expect(inflight.oldest()).toBeUndefined();
    expect(inflight.size).toBe(0);
  });

  it("takes back a redelivered older sequence in its place", () => {
    const inflight = new InflightSequences();
    for (const s of [10n, 11n, 12n]) inflight.add(s);
    inflight.delete(10n);
    inflight.add(4n);
    expect(inflight.oldest()).toBe(4n);
    inflight.delete(4n);
    inflight.add(10n);
    expect(inflight.oldest()).toBe(10n);
  });

  it("agrees with a scan through a long seeded run of takes, settles and redeliveries", () => {
    const inflight = new InflightSequences();
    const members = new Set<bigint>();
    let next = 0n;
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let step = 0; step < 20000; step++) {
      const roll = random();
      if (roll < 0.45 || members.size === 0) {
        inflight.add(next);
        members.add(next++);
      } else if (roll < 0.95) {
        const out = [...members];
        // Mostly the oldest settles, as a subscription acks in order; sometimes any.
        const s = random() < 0.7 ? scanOldest(members)! : out[Math.floor(random() * out.length)]!;
        expect(inflight.delete(s)).toBe(true);
        members.delete(s);
      } else {
        // A requeued delivery taken again: an older sequence out of order.
        const s = next > 50n ? next - 50n - BigInt(Math.floor(random() * 20)) : 0n;
        if (!members.has(s)) {
          inflight.add(s);
          members.add(s);
        }
      }
      expect(inflight.oldest()).toBe(scanOldest(members));
      expect(inflight.size).toBe(members.size);
    }
  });
});

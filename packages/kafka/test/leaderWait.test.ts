import { afterEach, describe, expect, it, vi } from "vitest";
import { isLeaderMoving, whileLeaderMoves } from "../src/client/leaderWait.js";

// A partition-level question asked while the partition's leader is being elected (a topic just
// created, a leader that failed over) is asked again; the kafkajs consumer of a fresh topic once
// failed its start-offset lookup on NOT_LEADER_OR_FOLLOWER (code 6) this way.
const notLeader = Object.assign(new Error("not the leader"), { code: 6 });
const noLeader = Object.assign(new Error("leader not available"), { code: 5 });

describe("whileLeaderMoves", () => {
  afterEach(() => vi.useRealTimers());

  it("asks again, refreshing metadata, until the leader answers", async () => {
    const answers: Array<Error | string> = [notLeader, noLeader, "watermarks"];
    let refreshed = 0;
    const result = await whileLeaderMoves(
      async () => {
        const next = answers.shift();
        if (next instanceof Error) throw next;
        return next;
      },
      async () => {
        refreshed += 1;
      },
    );
    expect(result).toBe("watermarks");
    expect(refreshed).toBe(2);
  });

  it("fails at once on any other error", async () => {
    let asked = 0;
    const other = Object.assign(new Error("unknown topic"), { code: 3 });
    await expect(
      whileLeaderMoves(async () => {
        asked += 1;
        throw other;
      }),
    ).rejects.toBe(other);
    expect(asked).toBe(1);
  });

  it("fails with the cluster's error once the leader stays missing past its wait", async () => {
    vi.useFakeTimers();
    const pending = whileLeaderMoves(async () => {
      throw notLeader;
    });
    const outcome = expect(pending).rejects.toBe(notLeader);
    await vi.advanceTimersByTimeAsync(10_200);
    await outcome;
  });

  it("tells the leader codes from the rest", () => {
    expect([notLeader, noLeader].map(isLeaderMoving)).toEqual([true, true]);
    expect([new Error("x"), undefined, { code: "6" }].map(isLeaderMoving)).toEqual([
      false,
      false,
      false,
    ]);
  });
});

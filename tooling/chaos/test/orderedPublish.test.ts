import { describe, expect, it } from "vitest";
import type { Published } from "../src/checker.js";
import { publishInOrder } from "../src/orderedPublish.js";

const messages: Published[] = Array.from({ length: 6 }, (_, seq) => ({ key: "a", seq }));

describe("publishing in order through failures", () => {
  it("sends a failed tick's messages again in order, before the next tick's: none overtakes", async () => {
    const written: number[] = [];
    // Like a write that fails part-way: 0 lands, 1 and 2 are refused the first time.
    const refusals = new Set([1, 2]);
    await publishInOrder(
      messages,
      async (m) => {
        if (refusals.delete(m.seq)) throw new Error("ENOSPC");
        written.push(m.seq);
      },
      // 6 messages over 100 ms: 3 a tick.
      100,
      () => {},
    );
    expect(written).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("gives a message that never goes through up, naming it, rather than wait for ever", async () => {
    const never = publishInOrder(
      messages.slice(0, 1),
      async () => {
        throw new Error("ENOSPC");
      },
      50,
      () => {},
      300,
    );
    await expect(never).rejects.toThrow("seq 0 could not be published");
  });
});

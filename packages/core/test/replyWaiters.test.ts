import { describe, expect, test } from "vitest";
import { ReplyWaiters } from "../src/brokerEntry.js";
import { HeaderMap, isRustStreamError, ManualClock, type RawMessage } from "../src/index.js";

const reply = (text: string): RawMessage => ({
  name: "inbox",
  payload: new TextEncoder().encode(text),
  headers: new HeaderMap(),
  partitionKey: undefined,
});

describe("ReplyWaiters", () => {
  test("hands each reply to the request with its correlation id; a stray one to nobody", async () => {
    const waiters = new ReplyWaiters(new ManualClock(), "topic");
    const a = waiters.wait("a", 1000);
    const b = waiters.wait("b", 1000);
    expect(waiters.resolve("nobody", reply("stray"))).toBe(false);
    expect(waiters.resolve(undefined, reply("no id"))).toBe(false);
    expect(waiters.resolve("b", reply("for b"))).toBe(true);
    expect(waiters.resolve("b", reply("late"))).toBe(false);
    expect(new TextDecoder().decode((await b.reply).payload)).toBe("for b");
    expect(waiters.resolve("a", reply("for a"))).toBe(true);
    expect(new TextDecoder().decode((await a.reply).payload)).toBe("for a");
  });

  test("times out on its clock, naming where the request went", async () => {
    const clock = new ManualClock();
    const waiters = new ReplyWaiters(clock, "stream");
    const wait = waiters.wait("a", 500);
    clock.advance(499);
    clock.advance(1);
    const error = await wait.reply.catch((e: unknown) => e);
    expect(isRustStreamError(error, "timeout")).toBe(true);
    expect((error as Error).message).toMatch(/no reply within 500 ms.*request's stream/);
    expect(waiters.resolve("a", reply("too late"))).toBe(false);
  });

  test("a cancelled wait takes no reply; rejectAll ends every wait", async () => {
    const waiters = new ReplyWaiters(new ManualClock(), "topic");
    const cancelled = waiters.wait("a", 1000);
    cancelled.cancel();
    expect(waiters.resolve("a", reply("x"))).toBe(false);
    const pending = waiters.wait("b", 1000);
    waiters.rejectAll(new Error("shut down"));
    await expect(pending.reply).rejects.toThrow("shut down");
  });
});

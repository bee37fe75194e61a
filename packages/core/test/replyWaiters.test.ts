import { describe, expect, test } from "vitest";
import { publishRequest, ReplyWaiters } from "../src/brokerEntry.js";
import {
  HeaderMap,
  headerNames,
  isRustStreamError,
  ManualClock,
  type OutgoingMessage,
  type RawMessage,
} from "../src/index.js";

const reply = (text: string, headers = new HeaderMap()): RawMessage => ({
  name: "inbox",
  payload: new TextEncoder().encode(text),
  headers,
  partitionKey: undefined,
});
const more = (text: string) => reply(text, new HeaderMap().set(headerNames.moreReplies, "1"));
const text = (message: RawMessage) => new TextDecoder().decode(message.payload);

/** A request through `publishRequest` on `waiters`, its published message kept for the test. */
async function requestOn(
  waiters: ReplyWaiters,
  timeoutMs: number,
  onPartial?: (reply: RawMessage) => void,
): Promise<{ sent: OutgoingMessage<unknown>; reply: Promise<RawMessage> }> {
  let sent: OutgoingMessage<unknown> | undefined;
  const reply = publishRequest(
    { name: "sum", payload: new Uint8Array() },
    (id) => ({ inbox: "inbox", ...waiters.wait(id, timeoutMs) }),
    async (message) => {
      sent = message;
    },
    onPartial === undefined ? { timeoutMs } : { timeoutMs, onPartial },
  );
  reply.catch(() => {});
  await new Promise((resolve) => setImmediate(resolve));
  return { sent: sent!, reply };
}

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

  test("a request that takes several replies hands each marked one to its listener, then resolves with the last", async () => {
    const clock = new ManualClock();
    const waiters = new ReplyWaiters(clock, "topic");
    const partials: string[] = [];
    const { sent, reply: answer } = await requestOn(waiters, 500, (r) => partials.push(text(r)));
    expect(sent.headers?.getString(headerNames.replyStream)).toBe("1");
    const id = sent.headers?.getString(headerNames.correlationId);
    expect(waiters.resolve(id, more("1"))).toBe(true);
    // Each partial reply waits timeoutMs again: 400 + 400 ms passes 500 without a timeout.
    clock.advance(400);
    expect(waiters.resolve(id, more("2"))).toBe(true);
    clock.advance(400);
    expect(waiters.resolve(id, reply("end"))).toBe(true);
    expect(text(await answer)).toBe("end");
    expect(partials).toEqual(["1", "2"]);
    expect(waiters.resolve(id, reply("late"))).toBe(false);
  });

  test("without a listener the first reply is the answer, marked or not; no stream is asked for", async () => {
    const waiters = new ReplyWaiters(new ManualClock(), "topic");
    const { sent, reply: answer } = await requestOn(waiters, 500);
    expect(sent.headers?.has(headerNames.replyStream)).toBe(false);
    waiters.resolve(sent.headers?.getString(headerNames.correlationId), more("first"));
    expect(text(await answer)).toBe("first");
  });

  test("a listener that throws fails its request with the error; the timeout still runs between replies", async () => {
    const clock = new ManualClock();
    const waiters = new ReplyWaiters(clock, "topic");
    const failing = await requestOn(waiters, 500, () => {
      throw new Error("cannot decode");
    });
    waiters.resolve(failing.sent.headers?.getString(headerNames.correlationId), more("x"));
    await expect(failing.reply).rejects.toThrow("cannot decode");
    const waiting = await requestOn(waiters, 500, () => {});
    waiters.resolve(waiting.sent.headers?.getString(headerNames.correlationId), more("x"));
    clock.advance(500);
    const error = await waiting.reply.catch((e: unknown) => e);
    expect(isRustStreamError(error, "timeout")).toBe(true);
  });

  test("the connections of two apps in one process: neither's reply reaches the other's request or listener", async () => {
    const clock = new ManualClock();
    const first = new ReplyWaiters(clock, "topic");
    const second = new ReplyWaiters(clock, "topic");
    const firstPartials: string[] = [];
    const secondPartials: string[] = [];
    const a = await requestOn(first, 500, (r) => firstPartials.push(text(r)));
    const b = await requestOn(second, 500, (r) => secondPartials.push(text(r)));
    const idA = a.sent.headers?.getString(headerNames.correlationId);
    const idB = b.sent.headers?.getString(headerNames.correlationId);
    expect(idA).not.toBe(idB);
    // Each request's replies handed to the other app's connection: nobody there waits for them.
    expect(second.resolve(idA, more("a to second"))).toBe(false);
    expect(first.resolve(idB, more("b to first"))).toBe(false);
    expect(second.resolve(idA, reply("a's last to second"))).toBe(false);
    expect(first.resolve(idB, reply("b's last to first"))).toBe(false);
    expect(firstPartials).toEqual([]);
    expect(secondPartials).toEqual([]);
    // Each to its own: both requests still wait, each listener hears its own partial reply only.
    expect(first.resolve(idA, more("a1"))).toBe(true);
    expect(second.resolve(idB, more("b1"))).toBe(true);
    expect(first.resolve(idA, reply("a's last"))).toBe(true);
    expect(second.resolve(idB, reply("b's last"))).toBe(true);
    expect(text(await a.reply)).toBe("a's last");
    expect(text(await b.reply)).toBe("b's last");
    expect(firstPartials).toEqual(["a1"]);
    expect(secondPartials).toEqual(["b1"]);
  });
});

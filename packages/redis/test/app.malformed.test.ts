import { headerNames, RustStream, readDeadLetterOrigin } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RedisBroker, RedisStream } from "../src/index.js";
import { entries, eventually, inspect, pendingCount } from "./appSupport.js";

// What other producers may write, and what this app may not send: each handled by the app's
// policy (dead letter here), the app still running and reading on afterwards.

const url = () => requireEnv("REDIS_URL");
const redis = inspect(url());
afterAll(() => redis.disconnect());
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const limit = 1024;

function service(key: string, dlq: string, replies: string): RustStream {
  return new RustStream({ name: "strict", version: "1.0.0" }).broker(
    new RedisBroker({ url: url(), group: "strict", maxMessageBytes: limit }),
    (b) => {
      b.subscriber(new RedisStream(key, { blockMs: 100 }))
        .reply(replies)
        .maxAttempts(3)
        .deadLetter(dlq)
        .onFailure({ backoff: { initialMs: 20, maxMs: 50 } })
        .handle((message) => {
          const { echo } = message as { echo: string };
          // The reply doubles what came in: a message under the limit may answer over it.
          return { echo: echo + echo };
        });
    },
  );
}

describe("malformed and oversized messages through the app", () => {
  it("entries that do not decode go to the dead letter with reason decode, and reading goes on", async () => {
    const key = uniqueName("malformed");
    const dlq = `${key}.dlq`;
    t = await TestApp.startLive(service(key, dlq, `${key}.replies`));
    // Written by other tools: no payload field at all, text that is not JSON, binary garbage with
    // an unnamed header field, and a payload field twice.
    await redis.xadd(key, "*", "foo", "bar");
    await redis.xadd(key, "*", "_payload", "{broken");
    await redis.xadd(key, "*", "_payload", Buffer.from([0xff, 0x00, 0xfe]), "h:", "nameless");
    await t.publish(key, { echo: "fine" });
    await eventually("all four settled", () => t!.subscriber(key).outcomes.length === 4);
    await t.settle();
    t.assertRunning();
    expect(t.subscriber(key).outcomes).toEqual([
      "dead-letter",
      "dead-letter",
      "dead-letter",
      "ack",
    ]);
    expect(t.subscriber(key).decodeFailures).toHaveLength(3);
    t.subscriber(key).assertCalledOnce().assertCalledWith({ echo: "fine" });
    const dead = await entries(redis, dlq);
    expect(dead.map((e) => readDeadLetterOrigin(e.headers)?.reason)).toEqual([
      "decode",
      "decode",
      "decode",
    ]);
    expect(dead[1]!.payload.toString()).toBe("{broken");
    expect([...dead[2]!.payload]).toEqual([0xff, 0x00, 0xfe]);
    expect(await pendingCount(redis, key, "strict")).toBe(0);
  });

  it("a reply over maxMessageBytes is refused before it is sent: retried, then dead-lettered after maxAttempts", async () => {
    const key = uniqueName("oversized");
    const dlq = `${key}.dlq`;
    const replies = `${key}.replies`;
    t = await TestApp.startLive(service(key, dlq, replies));
    await t.publish(key, { echo: "x".repeat(limit * 0.75) });
    await t.publish(key, { echo: "small" });
    await eventually("the dead letter and the small one's ack", () => {
      const outcomes = t!.subscriber(key).outcomes;
      return outcomes.includes("dead-letter") && outcomes.includes("ack");
    });
    await t.settle();
    t.assertRunning();
    const probe = t.subscriber(key);
    // The big one three times (each reply refused), the small one once.
    expect(probe.attempts.filter((a) => a > 1)).toEqual([2, 3]);
    expect(probe.calls).toHaveLength(4);
    expect(probe.outcomes.filter((o) => o === "dead-letter")).toHaveLength(1);
    // Nothing over the limit reached the server; the small reply did.
    const sent = await entries(redis, replies);
    expect(sent.map((e) => JSON.parse(e.payload.toString()))).toEqual([{ echo: "smallsmall" }]);
    const [moved, ...more] = await entries(redis, dlq);
    expect(more).toEqual([]);
    expect(readDeadLetterOrigin(moved!.headers)?.reason).toBe("max-attempts");
    // The three deliveries it had.
    expect(moved!.headers.getString(headerNames.retryCount)).toBe("3");
    expect(await pendingCount(redis, key, "strict")).toBe(0);
  });

  it("an entry over this app's limit, written by a producer with a larger one, is read, then dropped when its dead letter is refused", async () => {
    const key = uniqueName("big-in");
    const dlq = `${key}.dlq`;
    t = await TestApp.startLive(service(key, dlq, `${key}.replies`));
    const echo = "y".repeat(4 * limit);
    await redis.xadd(key, "*", "_payload", JSON.stringify({ echo }));
    await t.publish(key, { echo: "after" });
    await eventually("both settled", () => t!.subscriber(key).outcomes.length >= 4);
    await t.settle();
    t.assertRunning();
    const probe = t.subscriber(key);
    // Read and handled (the limit is on what this app sends); its reply is refused, so it is
    // retried up to maxAttempts; its dead letter is refused too, so it is dropped, never looping.
    expect(probe.calls.filter((c) => (c as { echo: string }).echo === echo)).toHaveLength(3);
    expect(probe.calls).toContainEqual({ echo: "after" });
    expect(probe.calls).toHaveLength(4);
    expect(await redis.exists(dlq)).toBe(0);
    expect(await pendingCount(redis, key, "strict")).toBe(0);
    expect(await redis.zcard(`${key}.delayed`)).toBe(0);
  });
});

import { HeaderMap, headerNames, isRustStreamError, readDeadLetterOrigin } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName, within } from "@ruststream/tooling-testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFrame } from "../src/client/frame.js";
import {
  RedisBroker,
  RedisList,
  RedisPubSub,
  type RedisSource,
  RedisStream,
} from "../src/index.js";
import { claimMember } from "../src/list/listScripts.js";
import type { RedisListSubscription } from "../src/list/listSubscription.js";
import { SWEEP_BATCH } from "../src/names.js";
import type { RedisStreamSubscription } from "../src/stream/streamSubscription.js";
import { entries, eventually, inspect } from "./appSupport.js";
import { type ServerWatch, watchServer } from "./serverWatch.js";

// The paths a subscription takes when something other than a message happens: a close or a due
// retry while a read is blocked on the server, the stream deleted under it, more parked or orphaned
// values than one sweep page, a reclaimed entry already past its cap, a shutdown racing a subscribe.

const url = () => requireEnv("REDIS_URL");
const redis = inspect(url());
let server: ServerWatch;
beforeAll(async () => {
  server = await watchServer(url());
});
afterAll(() => {
  server.close();
  redis.disconnect();
});

/** Long enough that a close or a wake that waited for the read to time out fails the test. */
const LONG_BLOCK_MS = 60_000;
/** How long a close or wake may take on a loaded machine, far below LONG_BLOCK_MS. */
const PROMPTLY_MS = 10_000;

describe("a read blocked on the server", () => {
  it("stream: close() unblocks a pull waiting in XREADGROUP instead of waiting out its block", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("unblock-stream");
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", blockMs: LONG_BLOCK_MS }),
    )) as RedisStreamSubscription;
    const waiting = sub.next();
    await server.ran("XREADGROUP", key);
    await within(PROMPTLY_MS, "close() of a subscription blocked in XREADGROUP", sub.close());
    expect(await within(PROMPTLY_MS, "the blocked pull", waiting)).toEqual({
      done: true,
      value: undefined,
    });
    await broker.shutdown();
  });

  it("reliable list: close() unblocks a pull waiting in BLMOVE instead of waiting out its block", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("unblock-list");
    const sub = (await broker.subscribe(
      new RedisList(key, { blockMs: LONG_BLOCK_MS }),
    )) as RedisListSubscription;
    const waiting = sub.next();
    await server.ran("BLMOVE", key);
    await within(PROMPTLY_MS, "close() of a subscription blocked in BLMOVE", sub.close());
    expect(await within(PROMPTLY_MS, "the blocked pull", waiting)).toEqual({
      done: true,
      value: undefined,
    });
    await broker.shutdown();
  });

  it("stream: a delayed retry falling due wakes the pull blocked in XREADGROUP", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("wake");
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", blockMs: LONG_BLOCK_MS }),
    )) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("later") });
    const first = await sub.next();
    if (first.done) throw new Error("the subscription ended");
    // Another lane pulls while this one fails: its read blocks before the retry is parked.
    const waiting = sub.next();
    await server.ran("XREADGROUP", key, 2);
    const parkedAt = performance.now();
    expect(await first.value.nackAfter(300)).toBe("ok");
    const back = await within(PROMPTLY_MS, "the delayed retry", waiting);
    if (back.done) throw new Error("the subscription ended");
    expect(performance.now() - parkedAt).toBeGreaterThanOrEqual(290);
    expect(text(back.value.payload)).toBe("later");
    expect(back.value.headers.getString(headerNames.retryCount)).toBe("1");
    await back.value.ack();
    await broker.shutdown();
  });

  it("stream: a seek while a pull waits in XREADGROUP moves the group without waiting out the block", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("seek-blocked");
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", blockMs: LONG_BLOCK_MS }),
    )) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("a") });
    await publisher.publish({ name: key, payload: bytes("b") });
    const [a, b] = await sub.nextBatch(2);
    if (a === undefined || b === undefined) throw new Error("expected two deliveries");
    await a.ack();
    await b.ack();
    const waiting = sub.next();
    await server.ran("XREADGROUP", key, 2);
    await within(PROMPTLY_MS, "seek() beside a blocked pull", sub.seek(a.position));
    const again = await within(PROMPTLY_MS, "the pull after the seek", waiting);
    if (again.done) throw new Error("the subscription ended");
    expect(text(again.value.payload)).toBe("a");
    await broker.shutdown();
  });
});

describe("the stream deleted under a running subscription", () => {
  it("recreates the group (NOGROUP) and goes on receiving what is published after", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("nogroup");
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", blockMs: 200 }),
    )) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("before") });
    const before = await sub.next();
    if (before.done) throw new Error("the subscription ended");
    await before.value.ack();
    const waiting = sub.next();
    // As FLUSHALL, or a restart of a server without persistence, leaves it: no stream, no group.
    expect(await redis.del(key)).toBe(1);
    await eventually("the group made again", async () => {
      const groups = (await redis.exists(key))
        ? ((await redis.xinfo("GROUPS", key)) as unknown[][])
        : [];
      return groups.some((g) => g[1] === "g");
    });
    await publisher.publish({ name: key, payload: bytes("after-1") });
    await publisher.publish({ name: key, payload: bytes("after-2") });
    const first = await within(PROMPTLY_MS, "the first message after", waiting);
    if (first.done) throw new Error("the subscription ended");
    const second = await within(PROMPTLY_MS, "the second message after", sub.next());
    if (second.done) throw new Error("the subscription ended");
    expect([text(first.value.payload), text(second.value.payload)]).toEqual(["after-1", "after-2"]);
    await first.value.ack();
    await second.value.ack();
    await broker.shutdown();
  });
});

describe("more than one sweep page at once", () => {
  it("stream: every due delayed retry goes back in the first read, however many pages", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("many-delayed");
    const total = SWEEP_BATCH + 72;
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", blockMs: LONG_BLOCK_MS }),
    )) as RedisStreamSubscription;
    // Parked by consumers that are gone, all long due: `u32 BE id length | id | frame`.
    const pipeline = redis.pipeline();
    for (let i = 0; i < total; i++) {
      const id = Buffer.from(`1-${i}`);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(id.length);
      const frame = encodeFrame(new HeaderMap({ [headerNames.retryCount]: "1" }), bytes(`d${i}`));
      pipeline.zadd(`${key}.delayed`, 1, Buffer.concat([length, id, frame]));
    }
    await pipeline.exec();
    const got = [...(await within(PROMPTLY_MS, "the first read", sub.nextBatch(64)))];
    expect(await redis.zcard(`${key}.delayed`)).toBe(0);
    expect(await redis.xlen(key)).toBe(total);
    while (got.length < total) {
      got.push(...(await within(PROMPTLY_MS, "the next read", sub.nextBatch(64))));
    }
    expect(got.map((d) => text(d.payload)).sort()).toEqual(
      Array.from({ length: total }, (_, i) => `d${i}`).sort(),
    );
    for (const d of got) await d.ack();
    await broker.shutdown();
  });

  it("reliable list: every orphaned value goes back in the first recovery, however many pages", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("many-orphans");
    const total = SWEEP_BATCH + 72;
    const count = 8;
    const source = new RedisList(key, { recoveryIdleMs: 1000, blockMs: LONG_BLOCK_MS, count });
    const keys = source.keys(false);
    // Held by a consumer that died long ago: in processing, claimed at time 1.
    const pid = Buffer.from([0, 0, 0, 9]);
    const pipeline = redis.pipeline();
    for (let i = 0; i < total; i++) {
      const raw = encodeFrame(new HeaderMap(), bytes(`o${i}`));
      pipeline.lpush(keys.processing, raw);
      pipeline.zadd(keys.recovery, 1, claimMember(pid, i + 1, raw));
    }
    await pipeline.exec();
    const sub = (await broker.subscribe(source)) as RedisListSubscription;
    const got = [...(await within(PROMPTLY_MS, "the first pull", sub.nextBatch(count)))];
    // Only the first pull's own values are held now; the rest wait in the queue.
    expect(got).toHaveLength(count);
    expect(await redis.llen(keys.processing)).toBe(count);
    expect(await redis.zcard(keys.recovery)).toBe(count);
    expect(await redis.llen(key)).toBe(total - count);
    while (got.length < total) {
      got.push(...(await within(PROMPTLY_MS, "the next pull", sub.nextBatch(count))));
    }
    expect(got.map((d) => text(d.payload)).sort()).toEqual(
      Array.from({ length: total }, (_, i) => `o${i}`).sort(),
    );
    // The dead consumer's delivery counts.
    expect(new Set(got.map((d) => d.headers.getString(headerNames.retryCount)))).toEqual(
      new Set(["1"]),
    );
    for (const d of got) await d.ack();
    expect(await redis.llen(keys.processing)).toBe(0);
    await broker.shutdown();
  });
});

describe("a reclaimed entry already past its cap", () => {
  it("goes to the dead letter unhandled, with its counts; the next message is handed out", async () => {
    const key = uniqueName("reclaim-past-cap");
    const dlq = `${key}.dlq`;
    const source = new RedisStream(key, {
      group: "g",
      reclaimIdleMs: 100,
      blockMs: 100,
      retry: { maxAttempts: 2, deadLetter: dlq },
    });
    // Its second and last attempt: one delivery before it, counted in the header.
    const dead = await new RedisBroker({ url: url() }).connect();
    const held = (await dead.subscribe(source)) as RedisStreamSubscription;
    const publisher = await dead.defaultPublishPolicy().pair(dead);
    await publisher.publish({
      name: key,
      payload: bytes("poison"),
      headers: new HeaderMap({ [headerNames.retryCount]: "1" }),
    });
    const last = await held.next();
    if (last.done) throw new Error("the subscription ended");
    expect(last.value.attempt).toBe(2);
    // The consumer crashes in that attempt: nothing settled, nothing returned.
    await dead.link.close();

    const live = await new RedisBroker({ url: url() }).connect();
    const sub = (await live.subscribe(source)) as RedisStreamSubscription;
    // The move is reported (an app's runtime counts it with its dead letters), once it is made.
    const moves: string[] = [];
    sub.onMoved((moved, destination, reason) =>
      moves.push(
        `${text(moved.payload)} -> ${destination === dlq ? "dlq" : destination} (${reason})`,
      ),
    );
    const pulled = sub.next();
    await eventually("the dead-lettered entry", async () => (await redis.xlen(dlq)) > 0);
    await eventually("the move reported", () => moves.length > 0);
    expect(moves).toEqual(["poison -> dlq (max-attempts)"]);
    const livePublisher = await live.defaultPublishPolicy().pair(live);
    await livePublisher.publish({ name: key, payload: bytes("next") });
    const next = await within(PROMPTLY_MS, "the message after", pulled);
    if (next.done) throw new Error("the subscription ended");
    expect(text(next.value.payload)).toBe("next");
    await next.value.ack();
    const [moved, ...more] = await entries(redis, dlq);
    expect(more).toEqual([]);
    expect(moved?.payload.toString()).toBe("poison");
    expect(readDeadLetterOrigin(moved?.headers ?? new HeaderMap())).toMatchObject({
      source: key,
      reason: "max-attempts",
    });
    // Three deliveries in all (one on the copy before, two of this entry's: the lost one and the
    // reclaim's), the entry's own two beside them.
    expect(moved?.headers.getString(headerNames.retryCount)).toBe("3");
    expect(moved?.headers.getString("redis-delivery-count")).toBe("2");
    expect(Number(((await redis.xpending(key, "g")) as unknown[])[0])).toBe(0);
    await live.shutdown();
  });
});

describe("a shutdown while subscribing", () => {
  const cases: Array<[string, (key: string) => RedisSource]> = [
    ["stream", (key) => new RedisStream(key, { group: "g" })],
    ["reliable list", (key) => new RedisList(key)],
    ["pub/sub", (key) => new RedisPubSub(key)],
  ];
  for (const [label, make] of cases) {
    it(`${label}: the subscribe rejects with closed and leaves no connection open`, async () => {
      // This file's own two (the MONITOR and the inspector), once the earlier tests' have closed.
      const onlyOwn = () =>
        process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length === 2;
      await eventually("the earlier tests' connections closed", onlyOwn);
      const broker = await new RedisBroker({ url: url() }).connect();
      const subscribing = broker.subscribe(make(uniqueName("shutdown-subscribe")));
      const closed = await broker.shutdown();
      await expect(subscribing).rejects.toSatisfy((e: unknown) => isRustStreamError(e, "closed"));
      expect(closed.closedSubscriptions).toBe(0);
      await eventually("every connection of the broker closed", onlyOwn);
    });
  }
});

import { HeaderMap, headerNames, RustStream, readDeadLetterOrigin, retry } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, expect, it } from "vitest";
import { RedisBroker, RedisPublish, RedisStream } from "../src/index.js";
import { entries, eventually, inspect, pendingCount } from "./appSupport.js";

// A retry chain across languages: a message that fails in a RustStream service (ruststream-fred
// 0.7.1) and is retried by a TypeScript one, and the other way round, keeps counting towards the
// cap, and lands in the dead letter once. The hand-over is the stream's durable delayed-retry set,
// whose members both write in RustStream's layout: the first service schedules the retry and stops,
// the second brings it back when it falls due.

const url = () => requireEnv("REDIS_URL");
const redis = inspect(url());
let t: TestApp | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});
afterAll(() => redis.disconnect());

const maxAttempts = 4;
const job = '{"job":7}';
/** Long enough for the first service to stop before the retry falls due. */
const handOverMs = 3000;

/** A TypeScript service on `key` whose handler always throws. */
async function failingTs(key: string, dlq: string, backoffMs: number) {
  const attempts: number[] = [];
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
    new RedisBroker({ url: url() }),
    (b) => {
      b.subscriber(new RedisStream(key, { group: "chain", consumer: "ts-1", blockMs: 100 }))
        .maxAttempts(maxAttempts)
        .deadLetter(dlq)
        .onFailure({ backoff: { initialMs: backoffMs, maxMs: backoffMs } })
        .handle((_message, ctx) => {
          attempts.push(ctx.attempt);
          throw new Error("always fails");
        });
    },
  );
  t = await TestApp.startLive(app);
  return attempts;
}

async function publishJob(key: string): Promise<void> {
  const broker = await new RedisBroker({ url: url() }).connect();
  try {
    const publisher = await new RedisPublish().pair(broker);
    await publisher.publish({
      name: key,
      payload: bytes(job),
      headers: new HeaderMap([
        ["content-type", "application/json"],
        ["x-trace", "t-9"],
      ]),
      partitionKey: bytes("job-7"),
    });
  } finally {
    await broker.shutdown();
  }
}

interopSuite("a retry chain across languages on one Redis stream", () => {
  it("fails in Rust, is retried in TypeScript: attempts 1 | 2, 3, 4, then one dead letter whose origin both read", async () => {
    const key = uniqueName("interop-chain-r2t");
    const dlq = `${key}.dlq`;
    await redis.xgroup("CREATE", key, "chain", "$", "MKSTREAM");
    const rust = await RustService.start({
      transport: "stream",
      url: url(),
      consume: {
        key,
        group: "chain",
        consumer: "rust-1",
        delayed_key: `${key}.delayed`,
        max_attempts: maxAttempts,
        dead_letter: dlq,
      },
    });
    await rust.failOn([job], { delayMs: handOverMs });
    await publishJob(key);
    await rust.waitForDeliveries(1);
    // RustStream scheduled the retry (ZADD) and acknowledged the entry: stop it before it is due.
    await eventually(
      "the retry in the delayed set",
      async () => (await redis.zcard(`${key}.delayed`)) === 1,
    );
    await eventually(
      "the entry acknowledged",
      async () => (await pendingCount(redis, key, "chain")) === 0,
    );
    expect(await rust.exit()).toBe(0);
    expect(await redis.zcard(`${key}.delayed`)).toBe(1);

    const attempts = await failingTs(key, dlq, 20);
    await eventually("the dead letter", async () => (await redis.xlen(dlq)) >= 1, 20_000);
    await t!.settle();
    expect(rust.deliveries.map((d) => [d.attempt, d.outcome])).toEqual([[1, "retry_after"]]);
    expect(attempts).toEqual([2, 3, 4]);
    const dead = await entries(redis, dlq);
    expect(dead).toHaveLength(1);
    const [moved] = dead;
    expect(text(moved!.payload)).toBe(job);
    // Its four deliveries counted, as RustStream's own dead letter counts them, and its origin.
    expect(moved!.headers.getString(headerNames.retryCount)).toBe("4");
    expect(moved!.headers.getString("x-trace")).toBe("t-9");
    expect(moved!.headers.getString("redis-partition-key")).toBe("job-7");
    const origin = readDeadLetterOrigin(moved!.headers);
    expect(origin).toMatchObject({ source: key, reason: "max-attempts" });

    // A Rust service reading the dead letter sees the same origin headers, byte for byte.
    await redis.xgroup("CREATE", dlq, "dlq", "0");
    const reader = await RustService.start({
      transport: "stream",
      url: url(),
      consume: { key: dlq, group: "dlq", consumer: "rust-dlq" },
    });
    await reader.waitForDeliveries(1);
    const [read] = reader.deliveries;
    const header = (name: string) =>
      read!.headers.find(([n]) => n === name)?.[1].toString() ?? null;
    expect(text(read!.payload)).toBe(job);
    expect(header("x-ruststream-dlq-source")).toBe(key);
    expect(header("x-ruststream-dlq-reason")).toBe("max-attempts");
    expect(header("x-ruststream-dlq-position")).toBe(origin!.position);
    expect(read!.retryCount).toBe(4);
    expect(read!.partitionKey?.toString()).toBe("job-7");
  });

  it("fails in TypeScript, is retried in Rust: attempts 1 | 2, 3, 4, then one dead letter (RustStream writes no origin)", async () => {
    const key = uniqueName("interop-chain-t2r");
    const dlq = `${key}.dlq`;
    await redis.xgroup("CREATE", key, "chain", "$", "MKSTREAM");
    // The first failure's backoff is the hand-over: a durable delayed retry in `<key>.delayed`.
    const attempts = await failingTs(key, dlq, handOverMs);
    await publishJob(key);
    await eventually("the first attempt", () => attempts.length === 1);
    await eventually(
      "the retry in the delayed set",
      async () => (await redis.zcard(`${key}.delayed`)) === 1,
    );
    await eventually(
      "the entry acknowledged",
      async () => (await pendingCount(redis, key, "chain")) === 0,
    );
    await t!.stop();
    t = undefined;
    expect(await redis.zcard(`${key}.delayed`)).toBe(1);

    const rust = await RustService.start({
      transport: "stream",
      url: url(),
      consume: {
        key,
        group: "chain",
        consumer: "rust-1",
        block_ms: 100,
        delayed_key: `${key}.delayed`,
        max_attempts: maxAttempts,
        dead_letter: dlq,
      },
    });
    await rust.failOn([job]);
    await eventually("the dead letter", async () => (await redis.xlen(dlq)) >= 1, 20_000);
    await rust.waitForDeliveries(3);
    expect(attempts).toEqual([1]);
    expect(rust.deliveries.map((d) => [d.attempt, d.retryCount, d.outcome])).toEqual([
      [2, 1, "retry"],
      [3, 2, "retry"],
      [4, 3, "retry"],
    ]);
    const dead = await entries(redis, dlq);
    expect(dead).toHaveLength(1);
    const [moved] = dead;
    expect(text(moved!.payload)).toBe(job);
    expect(moved!.headers.getString("x-trace")).toBe("t-9");
    expect(moved!.headers.getString("redis-partition-key")).toBe("job-7");
    // RustStream's dead letter is a copy with the retry count raised to its four deliveries, as
    // ours is, and no origin: ours reads none from it.
    expect(moved!.headers.getString(headerNames.retryCount)).toBe("4");
    expect(readDeadLetterOrigin(moved!.headers)).toBeUndefined();
    expect(await pendingCount(redis, key, "chain")).toBe(0);
    expect(await redis.zcard(`${key}.delayed`)).toBe(0);
  });

  it("known difference: after a reclaim, RustStream's retry copy starts counting again (attempts 2 | 1, 2, 3), where ours carries the count on (2, 3)", async () => {
    const rustKey = uniqueName("interop-reclaim-count-rust");
    const tsKey = uniqueName("interop-reclaim-count-ts");
    // An entry a consumer read and died with: pending, delivered once.
    for (const key of [rustKey, tsKey]) {
      await redis.xgroup("CREATE", key, "chain", "$", "MKSTREAM");
      await publishJob(key);
      await redis.xreadgroup("GROUP", "chain", "gone", "COUNT", 1, "STREAMS", key, ">");
    }
    const rust = await RustService.start({
      transport: "stream",
      url: url(),
      consume: {
        key: rustKey,
        group: "chain",
        consumer: "rust-1",
        block_ms: 100,
        reclaim_ms: 300,
        max_attempts: 3,
        dead_letter: `${rustKey}.dlq`,
      },
    });
    await rust.failOn([job]);
    await eventually(
      "RustStream's dead letter",
      async () => (await redis.xlen(`${rustKey}.dlq`)) >= 1,
    );
    await rust.waitForDeliveries(4);
    // The reclaimed delivery is retried by the crate's requeue, which appends the entry with its
    // headers as they were: the count it had is gone (and the reclaim's own count headers ride on).
    expect(rust.deliveries.map((d) => [d.via, d.attempt, d.retryCount])).toEqual([
      ["reclaim", 2, 0],
      ["stream", 1, 0],
      ["stream", 2, 1],
      ["stream", 3, 2],
    ]);
    const copy = rust.deliveries[1]!.headers.map(([n]) => n);
    expect(copy).toContain("redis-delivery-count");

    const tsAttempts: number[] = [];
    const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
      new RedisBroker({ url: url() }),
      (b) => {
        b.subscriber(
          new RedisStream(tsKey, {
            group: "chain",
            consumer: "ts-1",
            blockMs: 100,
            reclaimIdleMs: 300,
          }),
        )
          .maxAttempts(3)
          .deadLetter(`${tsKey}.dlq`)
          .handle((_message, ctx) => {
            tsAttempts.push(ctx.attempt);
            return retry();
          });
      },
    );
    t = await TestApp.startLive(app);
    await eventually("our dead letter", async () => (await redis.xlen(`${tsKey}.dlq`)) >= 1);
    await t.settle();
    expect(tsAttempts).toEqual([2, 3]);
    expect(
      (await entries(redis, `${tsKey}.dlq`)).map((e) =>
        e.headers.getString(headerNames.retryCount),
      ),
    ).toEqual(["3"]);
  });

  it("a Rust and a TypeScript consumer in one group, both failing: attempts 1 to 5 once each, whichever language ran them, and one dead letter", async () => {
    const key = uniqueName("interop-chain-mixed");
    const dlq = `${key}.dlq`;
    const jobs = ["a", "b", "c", "d"].map((id) => `{"job":"${id}"}`);
    await redis.xgroup("CREATE", key, "chain", "$", "MKSTREAM");
    const tsSeen: [string, number][] = [];
    const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
      new RedisBroker({ url: url() }),
      (b) => {
        b.subscriber(new RedisStream(key, { group: "chain", consumer: "ts-1", blockMs: 100 }))
          .maxAttempts(5)
          .deadLetter(dlq)
          .handle((message, ctx) => {
            tsSeen.push([JSON.stringify(message), ctx.attempt]);
            return retry();
          });
      },
    );
    t = await TestApp.startLive(app);
    const rust = await RustService.start({
      transport: "stream",
      url: url(),
      consume: {
        key,
        group: "chain",
        consumer: "rust-1",
        block_ms: 100,
        max_attempts: 5,
        dead_letter: dlq,
      },
    });
    await rust.failOn(jobs);
    for (const j of jobs) await rust.publish({ key, payload: bytes(j) });
    await eventually("four dead letters", async () => (await redis.xlen(dlq)) >= 4, 20_000);
    await eventually(
      "nothing pending",
      async () => (await pendingCount(redis, key, "chain")) === 0,
    );
    const seen = [
      ...tsSeen,
      ...rust.deliveries.map((d) => [text(d.payload), d.attempt] as [string, number]),
    ];
    for (const j of jobs) {
      expect([
        j,
        seen
          .filter(([p]) => p === j)
          .map(([, a]) => a)
          .sort(),
      ]).toEqual([j, [1, 2, 3, 4, 5]]);
    }
    expect((await entries(redis, dlq)).map((e) => text(e.payload)).sort()).toEqual(
      [...jobs].sort(),
    );
    // The copies went back and forth: each language ran some of the attempts.
    expect(tsSeen.length).toBeGreaterThan(0);
    expect(rust.deliveries.length).toBeGreaterThan(0);
  });
});

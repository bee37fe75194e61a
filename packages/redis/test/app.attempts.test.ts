import {
  HeaderMap,
  headerNames,
  type Outcome,
  RustStream,
  readDeadLetterOrigin,
  retry,
  type Source,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RedisBroker, RedisList, RedisStream } from "../src/index.js";
import { entries, eventually, inspect, pendingCount } from "./appSupport.js";

// A message that always fails, through the app's runtime on the real server: exactly maxAttempts
// handler calls, then one dead-lettered copy with its origin, whichever way Redis brought it back.

const url = () => requireEnv("REDIS_URL");
const redis = inspect(url());
afterAll(() => redis.disconnect());
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const maxAttempts = 3;

function failingApp(source: string | Source, dlq: string, fail: () => Outcome): RustStream {
  return new RustStream({ name: "poison", version: "1.0.0" }).broker(
    new RedisBroker({ url: url(), group: "poison" }),
    (b) => {
      b.subscriber(source as string)
        .maxAttempts(maxAttempts)
        .deadLetter(dlq)
        .onFailure({ backoff: { initialMs: 20, maxMs: 50 } })
        .handle(fail);
    },
  );
}

const throwing = (): Outcome => {
  throw new Error("always fails");
};

async function expectOneDeadLetter(dlq: string, source: string, deliveries: string) {
  await eventually("the dead-lettered copy", async () => (await redis.xlen(dlq)) > 0);
  const [moved, ...more] = await entries(redis, dlq);
  expect(more).toEqual([]);
  expect(JSON.parse(moved!.payload.toString())).toEqual({ id: "poison" });
  const origin = readDeadLetterOrigin(moved!.headers);
  expect(origin?.source).toBe(source);
  expect(origin?.reason).toBe("max-attempts");
  // An entry id on a stream, the subscription's sequence on a list.
  expect(origin?.position).toMatch(/^(\d+-\d+|#\d+)$/);
  // Every delivery the message had, as RustStream's dead letters count them.
  expect(moved!.headers.getString(headerNames.retryCount)).toBe(deliveries);
  // ...and the count it was moved with, from which the dead letter's own subscriber counts.
  expect(moved!.headers.getString(headerNames.deadLetterRetryCount)).toBe(deliveries);
  expect(moved!.headers.getString("x-trace")).toBe("t-9");
}

describe("a message that always fails, through the runtime on real Redis", () => {
  it("stream, immediate retry (a requeued copy): maxAttempts calls, then the dead letter", async () => {
    const key = uniqueName("requeued");
    const dlq = `${key}.dlq`;
    t = await TestApp.startLive(failingApp(key, dlq, () => retry()));
    await t.publish(key, { id: "poison" }, { headers: { "x-trace": "t-9" } });
    await eventually("the dead letter", () => t!.subscriber(key).outcomes.includes("dead-letter"));
    await t.settle();
    expect(t.subscriber(key).attempts).toEqual([1, 2, 3]);
    expect(t.subscriber(key).outcomes).toEqual(["retry", "retry", "dead-letter"]);
    await expectOneDeadLetter(dlq, key, "3");
    expect(await pendingCount(redis, key, "poison")).toBe(0);
  });

  it("stream, a thrown error (backoff through the durable delayed retry): the same count", async () => {
    const key = uniqueName("delayed");
    const dlq = `${key}.dlq`;
    t = await TestApp.startLive(failingApp(key, dlq, throwing));
    await t.publish(key, { id: "poison" }, { headers: { "x-trace": "t-9" } });
    await eventually("the dead letter", () => t!.subscriber(key).outcomes.includes("dead-letter"));
    await t.settle();
    expect(t.subscriber(key).attempts).toEqual([1, 2, 3]);
    expect(t.subscriber(key).outcomes).toEqual(["retry-after", "retry-after", "dead-letter"]);
    await expectOneDeadLetter(dlq, key, "3");
    expect(await redis.zcard(`${key}.delayed`)).toBe(0);
  });

  it("reliable list, a thrown error (the runtime's copies) and an immediate retry (requeue)", async () => {
    for (const [label, fail] of [
      ["thrown", throwing],
      ["retry", () => retry()],
    ] as const) {
      const key = uniqueName(`list-${label}`);
      const dlq = `${key}.dlq`;
      t = await TestApp.startLive(failingApp(new RedisList(key, { blockMs: 200 }), dlq, fail));
      // The app reads the key as a list, so its publisher writes the name to that list.
      await t.publish(key, { id: "poison" }, { headers: { "x-trace": "t-9" } });
      await eventually(`${label}: the dead letter`, () =>
        t!.subscriber(key).outcomes.includes("dead-letter"),
      );
      await t.settle();
      expect(t.subscriber(key).attempts, label).toEqual([1, 2, 3]);
      await expectOneDeadLetter(dlq, key, "3");
      expect(await redis.llen(key)).toBe(0);
      expect(await redis.llen(`${key}.processing`)).toBe(0);
      await t.stop();
      t = undefined;
    }
  });

  it("stream, reclaimed from a consumer that died holding it: its lost delivery counts", async () => {
    const key = uniqueName("reclaimed");
    const dlq = `${key}.dlq`;
    const source = new RedisStream(key, { group: "poison", reclaimIdleMs: 200, blockMs: 100 });
    // A consumer of the same group reads the message and dies without settling it.
    const dead = await new RedisBroker({ url: url() }).connect();
    const held = await dead.subscribe(source);
    const publisher = await dead.defaultPublishPolicy().pair(dead);
    await publisher.publish({
      name: key,
      payload: bytes(JSON.stringify({ id: "poison" })),
      headers: new HeaderMap({ "x-trace": "t-9" }),
    });
    const first = await held.next();
    expect(first.done).toBe(false);
    await dead.link.close();
    t = await TestApp.startLive(failingApp(source, dlq, () => retry()));
    await eventually("the dead letter", () => t!.subscriber(key).outcomes.includes("dead-letter"));
    await t.settle();
    // Delivery 1 died with the first consumer; the app sees 2 (reclaimed) and 3 (its copy).
    expect(t.subscriber(key).attempts).toEqual([2, 3]);
    expect(t.subscriber(key).outcomes).toEqual(["retry", "dead-letter"]);
    await expectOneDeadLetter(dlq, key, "3");
    expect(await pendingCount(redis, key, "poison")).toBe(0);
  });
});

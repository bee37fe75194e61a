import { RustStream, retryAfter } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { brokers, bytes, requireEnv, sleep, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  type ConnectedRedisBroker,
  RedisBroker,
  RedisList,
  RedisPublish,
  type RedisPublisher,
  type RedisSource,
  RedisStream,
} from "../src/index.js";
import { eventually, inspect, pendingCount } from "./appSupport.js";

const clients: ReturnType<typeof inspect>[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe("an app across restarts", () => {
  it("a delayed retry survives a stop of the app and arrives at a new app instance", async () => {
    const url = requireEnv("REDIS_URL");
    const redis = inspect(url);
    clients.push(redis);
    const key = uniqueName("app-delay");
    const seen: Array<{ app: string; attempt: number }> = [];
    // Two instances of the same service, as a deploy replaces one with the next.
    const service = (label: string) =>
      new RustStream({ name: "parking", version: "1.0.0" }).broker(
        new RedisBroker({ url, group: "parking" }),
        (b) => {
          b.subscriber(new RedisStream(key, { blockMs: 100 })).handle((_message, ctx) => {
            seen.push({ app: label, attempt: ctx.attempt });
            return ctx.attempt === 1 ? retryAfter(1500) : undefined;
          });
        },
      );
    t = await TestApp.startLive(service("first"));
    await t.publish(key, { id: 1 });
    await eventually("the first attempt", () => seen.length === 1);
    await t.settle();
    t.subscriber(key).assertOutcomes("retry-after");
    await t.stop();
    t = undefined;
    // Parked on the server, nothing held by the stopped app.
    expect(await redis.zcard(`${key}.delayed`)).toBe(1);
    expect(await pendingCount(redis, key, "parking")).toBe(0);
    t = await TestApp.startLive(service("second"));
    await eventually("the delayed retry at the new instance", () => seen.length === 2);
    await t.settle();
    expect(seen).toEqual([
      { app: "first", attempt: 1 },
      { app: "second", attempt: 2 },
    ]);
    t.subscriber(key).assertOutcomes("ack");
    expect(await redis.zcard(`${key}.delayed`)).toBe(0);
    expect(await pendingCount(redis, key, "parking")).toBe(0);
  });

  it(
    "the persistent server hard-restarted mid-stream: the app reconnects and goes on, nothing lost, nothing acked comes back",
    () =>
      // Restarts the persistent server: alone on it, or another such test dies mid-way by luck.
      brokers.redis.exclusive("persistent", async () => {
        const key = uniqueName("app-restart");
        const count = 4;
        const { handled, redis, producer } = await restartUnderLoad({
          key,
          source: new RedisStream(key, { blockMs: 200, count }),
          group: "survivor",
          publisherOf: (producer) => producer.defaultPublishPolicy().pair(producer),
        });
        // Twice only what was read and not yet acknowledged when the server died (a read's COUNT, and
        // a publish whose reply the crash swallowed and the client sent again).
        const repeats = handled.length - new Set(handled).size;
        expect(repeats).toBeLessThanOrEqual(count + 1);
        await eventually(
          "every entry acknowledged",
          async () => (await pendingCount(redis, key, "survivor")) === 0,
        );
        await producer.shutdown();
      }),
    180_000,
  );

  it(
    "the persistent server hard-restarted under a list read in batches: the app goes on, nothing lost, nothing left in processing",
    () =>
      // Restarts the persistent server: alone on it, or another such test dies mid-way by luck.
      brokers.redis.exclusive("persistent", async () => {
        const key = uniqueName("app-restart-list");
        const { handled, redis, producer } = await restartUnderLoad({
          key,
          // Recovery on: a take whose reply the crash swallowed left its values in processing with
          // their claims, and only recovery finds them (the README's reliable-list contract).
          source: new RedisList(key, { blockMs: 200, count: 4, recoveryIdleMs: 1000 }),
          publisherOf: (producer) => new RedisPublish({ transport: "list" }).pair(producer),
        });
        // Twice at most: a publish whose reply the crash swallowed and the client sent again, and
        // the values of one batch (count 4) handled but whose acks the crash lost, recovered.
        expect(handled.length - new Set(handled).size).toBeLessThanOrEqual(5);
        await eventually(
          "nothing left in the queue or in processing",
          async () =>
            (await redis.llen(key)) === 0 && (await redis.llen(`${key}.processing`)) === 0,
        );
        await producer.shutdown();
      }),
    180_000,
  );
});

const total = 60;

interface RestartCase {
  readonly key: string;
  readonly source: RedisSource;
  /** The broker's group option; none: the app's name. */
  readonly group?: string;
  readonly publisherOf: (producer: ConnectedRedisBroker) => Promise<RedisPublisher>;
}

/**
 * An app reading `source` on the persistent server while another client publishes `total` messages
 * 10 ms apart; the server is hard-restarted once 15 are handled. Checks what every transport owes:
 * a new server process, the restart mid-work, the app still running, every message handled.
 */
async function restartUnderLoad(c: RestartCase) {
  const url = requireEnv("REDIS_PERSISTENT_URL");
  const handled: string[] = [];
  const app = new RustStream({ name: "survivor", version: "1.0.0" }).broker(
    new RedisBroker(c.group === undefined ? { url } : { url, group: c.group }),
    (b) => {
      b.subscriber(c.source, {
        codec: {
          contentType: "text/plain",
          encode: bytes,
          decode: (p) => new TextDecoder().decode(p),
        },
      }).handle(async (message) => {
        handled.push(message as string);
        await sleep(5);
      });
    },
  );
  const redis = inspect(url);
  clients.push(redis);
  const runId = async () => /run_id:(\w+)/.exec(await redis.info("server"))?.[1];
  const before = await runId();
  t = await TestApp.startLive(app);
  // The producer is another process's client: its own connection, publishing the whole time.
  const producer = await new RedisBroker({ url }).connect();
  const publisher = await c.publisherOf(producer);
  let sent = 0;
  const publishing = (async () => {
    for (let i = 0; i < total; i++) {
      await publisher.publish({ name: c.key, payload: bytes(`m${i}`) });
      sent++;
      await sleep(10);
    }
  })();
  await eventually("the first messages", () => handled.length >= 15);
  // Counted as the kill is sent: the producer's client queues what it sends while the server is
  // down and writes it on reconnect, so the server's own count after the restart says nothing.
  const sentAtRestart = sent;
  await brokers.redis.restart("persistent", { hard: true });
  const handledAtRestart = handled.length;
  await publishing;
  await eventually(
    "every message handled after the restart",
    () => new Set(handled).size === total,
    30_000,
  );
  await t.settle();
  t.assertRunning();
  // It was a new server process, and the work was still under way when it died.
  expect(await runId()).not.toBe(before);
  expect(handledAtRestart).toBeLessThan(total);
  // The source was still being written when the server died.
  expect(sentAtRestart).toBeLessThan(total);
  const expected = [...Array(total).keys()].map((i) => `m${i}`);
  expect([...new Set(handled)].sort()).toEqual(expected.sort());
  return { handled, redis, producer };
}

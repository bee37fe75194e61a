import { fileURLToPath } from "node:url";
import {
  bytes,
  type ChildService,
  killServices,
  requireEnv,
  startService,
  uniqueName,
} from "@ruststream/tooling-testkit";
import type { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisBroker, RedisPublish } from "../src/index.js";
import { eventually, inspect, pendingCount } from "./appSupport.js";

// The service as deployed: a process running app.run() (fixtures/appConsumer.ts). One is killed
// with SIGKILL mid-stream; a second process of the same service reclaims what it held and finishes.

const fixture = fileURLToPath(new URL("./fixtures/appConsumer.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
afterAll(killServices);

function service(
  url: string,
  key: string,
  handled: string[],
  transport: "stream" | "list" = "stream",
): Promise<ChildService> {
  return startService({
    fixture,
    args: [url, key, transport],
    cwd,
    onLine: (line) => handled.push(line),
  });
}

/** The payloads the producer sends, `m0` to `m<total - 1>`, sorted as the checks compare them. */
const payloads = (total: number): string[] => [...Array(total).keys()].map((i) => `m${i}`).sort();

/** A reliable list's consumers hold nothing: no value in processing, no claim for recovery. */
const nothingHeld = (redis: Redis, key: string) => async (): Promise<boolean> =>
  (await redis.llen(`${key}.processing`)) === 0 && (await redis.zcard(`${key}.recovery`)) === 0;

describe("a service process killed mid-stream", () => {
  it("a second process of the app reclaims what the first held and finishes: every message handled", async () => {
    const url = requireEnv("REDIS_URL");
    const key = uniqueName("app-crash");
    const total = 300;
    const byFirst: string[] = [];
    const first = await service(url, key, byFirst);
    const producer = await new RedisBroker({ url }).connect();
    const publisher = await producer.defaultPublishPolicy().pair(producer);
    for (let i = 0; i < total; i++) await publisher.publish({ name: key, payload: bytes(`m${i}`) });
    const redis = inspect(url);
    // Killed under way with entries read and not acknowledged (a handler takes 2 ms, so the four
    // seen pending are still there when the kill lands): the work the second process must reclaim.
    await eventually(
      "the first process under way, holding entries",
      async () => byFirst.length >= 60 && (await pendingCount(redis, key, "crash-app")) >= 4,
    );
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe(null);
    const orphaned = await pendingCount(redis, key, "crash-app");
    const bySecond: string[] = [];
    const second = await service(url, key, bySecond);
    const all = () => new Set([...byFirst, ...bySecond]);
    await eventually("every message handled", () => all().size === total, 30_000);
    await eventually(
      "every entry acknowledged",
      async () => (await pendingCount(redis, key, "crash-app")) === 0,
    );
    // The second process stops as a deployment stops it: SIGTERM, drained, exit 0.
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(byFirst.length).toBeLessThan(total);
    expect(orphaned).toBeGreaterThan(0);
    expect([...all()].sort()).toEqual(payloads(total));
    // Handled twice at most what the first had read and not acknowledged when it died.
    const repeats = byFirst.length + bySecond.length - total;
    expect(repeats).toBeLessThanOrEqual(orphaned);
    redis.disconnect();
    await producer.shutdown();
  }, 60_000);

  it("a reliable list read in batches: the second process recovers the batch the first held, every message handled", async () => {
    const url = requireEnv("REDIS_URL");
    const key = uniqueName("app-crash-list");
    const total = 300;
    const byFirst: string[] = [];
    const first = await service(url, key, byFirst, "list");
    const producer = await new RedisBroker({ url }).connect();
    const publisher = await new RedisPublish({ transport: "list" }).pair(producer);
    for (let i = 0; i < total; i++) await publisher.publish({ name: key, payload: bytes(`m${i}`) });
    const redis = inspect(url);
    await eventually(
      "the first process under way, holding values",
      async () => byFirst.length >= 60 && (await redis.llen(`${key}.processing`)) >= 4,
    );
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe(null);
    // Killed holding values moved into processing and not settled: what recovery must return.
    const orphaned = await redis.llen(`${key}.processing`);
    const bySecond: string[] = [];
    const second = await service(url, key, bySecond, "list");
    const all = () => new Set([...byFirst, ...bySecond]);
    await eventually("every message handled", () => all().size === total, 30_000);
    await eventually("nothing left in processing or claimed", nothingHeld(redis, key));
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(byFirst.length).toBeLessThan(total);
    expect(orphaned).toBeGreaterThan(0);
    expect([...all()].sort()).toEqual(payloads(total));
    const repeats = byFirst.length + bySecond.length - total;
    expect(repeats).toBeLessThanOrEqual(orphaned);
    expect(await redis.llen(key)).toBe(0);
    redis.disconnect();
    await producer.shutdown();
  }, 60_000);

  it("a reliable list whose service processes are killed one after another at different moments: every message handled, nothing left behind", async () => {
    const url = requireEnv("REDIS_URL");
    const key = uniqueName("app-kills-list");
    const total = 300;
    const kills = 3;
    const handled: string[] = [];
    const producer = await new RedisBroker({ url }).connect();
    const publisher = await new RedisPublish({ transport: "list" }).pair(producer);
    for (let i = 0; i < total; i++) await publisher.publish({ name: key, payload: bytes(`m${i}`) });
    const redis = inspect(url);
    for (let kill = 0; kill < kills; kill++) {
      const before = handled.length;
      const victim = await service(url, key, handled, "list");
      // Each killed after a different number of messages, so the kill lands on a different step.
      const more = 20 + ((kill * 17 + before) % 40);
      await eventually(
        `process ${kill + 1} under way, holding values`,
        async () => handled.length >= before + more && (await redis.llen(`${key}.processing`)) >= 4,
      );
      victim.child.kill("SIGKILL");
      expect(await victim.exited).toBe(null);
    }
    expect(new Set(handled).size).toBeLessThan(total);
    // The last one died holding values: work only recovery gives back.
    expect(await redis.llen(`${key}.processing`)).toBeGreaterThan(0);
    const finisher = await service(url, key, handled, "list");
    await eventually("every message handled", () => new Set(handled).size === total, 30_000);
    await eventually("nothing left in processing or claimed", nothingHeld(redis, key));
    finisher.child.kill("SIGTERM");
    expect(await finisher.exited).toBe(0);
    expect([...new Set(handled)].sort()).toEqual(payloads(total));
    // Handled twice at most what each killed process held: one batch (count 16) apiece.
    expect(handled.length - total).toBeLessThanOrEqual(kills * 16);
    expect(await redis.llen(key)).toBe(0);
    redis.disconnect();
    await producer.shutdown();
  }, 90_000);
});

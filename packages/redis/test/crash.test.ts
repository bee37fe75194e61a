import { fileURLToPath } from "node:url";
import {
  bytes,
  type ChildService,
  killServices,
  requireEnv,
  startService,
  text,
  uniqueName,
} from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { RedisBroker, RedisStream } from "../src/index.js";
import { eventually, inspect, pendingCount } from "./appSupport.js";

const fixture = fileURLToPath(new URL("./fixtures/consumer.ts", import.meta.url));

const cwd = fileURLToPath(new URL("..", import.meta.url));
afterAll(killServices);

function consumerProcess(url: string, key: string, handled: string[]): Promise<ChildService> {
  return startService({ fixture, args: [url, key], cwd, onLine: (line) => handled.push(line) });
}

describe("a consumer process killed mid-stream", () => {
  it("a second consumer reclaims its pending entries and finishes the work: every message handled", async () => {
    const url = requireEnv("REDIS_URL");
    const key = uniqueName("crash");
    const total = 300;
    const broker = await new RedisBroker({ url }).connect();
    const source = new RedisStream(key, {
      group: "work",
      count: 16,
      blockMs: 200,
      reclaimIdleMs: 500,
    });
    // The group exists before anything is published, so nothing falls before its start.
    const second = await broker.subscribe(source);
    await second.close();
    const byFirst: string[] = [];
    const first = await consumerProcess(url, key, byFirst);
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    for (let i = 0; i < total; i++) await publisher.publish({ name: key, payload: bytes(`m${i}`) });
    // Killed under way holding entries read and not acknowledged (a message takes 2 ms, so the four
    // seen pending are still there when the kill lands): what the second consumer must reclaim. A
    // kill between two reads would leave nothing to reclaim and prove nothing.
    const redis = inspect(url);
    await eventually(
      "the first consumer under way, holding entries",
      async () => byFirst.length >= 60 && (await pendingCount(redis, key, "work")) >= 4,
    );
    first.child.kill("SIGKILL");
    await first.exited;
    const orphaned = await pendingCount(redis, key, "work");
    redis.disconnect();
    const handled = new Set(byFirst);
    const subscription = await broker.subscribe(source);
    const deadline = Date.now() + 20_000;
    while (handled.size < total && Date.now() < deadline) {
      const next = await subscription.next();
      if (next.done) break;
      handled.add(text(next.value.payload));
      await next.value.ack();
    }
    expect(byFirst.length).toBeLessThan(total);
    expect(orphaned).toBeGreaterThan(0);
    expect(handled.size).toBe(total);
    await broker.shutdown();
  }, 60_000);
});

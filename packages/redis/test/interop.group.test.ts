import { fileURLToPath } from "node:url";
import { bytes as bytesCodec, type HandlerContext, HeaderMap, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import {
  bytes,
  type ChildService,
  killServices,
  requireEnv,
  startService,
  text,
  uniqueName,
} from "@ruststream/tooling-testkit";
import { afterAll, afterEach, expect, it } from "vitest";
import { RedisBroker, RedisPublish, RedisStream } from "../src/index.js";
import { eventually, inspect, pendingCount } from "./appSupport.js";

// One consumer group, two languages: a TypeScript consumer and a RustStream consumer (ruststream-fred
// 0.7.1) read one stream through one group. Every entry is handled once and none is lost, and what a
// consumer of one language held when it was killed, the other reclaims.

const url = () => requireEnv("REDIS_URL");
const redis = inspect(url());
let t: TestApp | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
  killServices();
});
afterAll(() => redis.disconnect());

interface Handled {
  readonly payload: string;
  readonly attempt: number;
  readonly redeliveryCount: number | undefined;
}

/** A TypeScript service in the group, recording what its handler ran on. */
async function tsConsumer(key: string, group: string, options: { reclaimIdleMs?: number } = {}) {
  const handled: Handled[] = [];
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
    new RedisBroker({ url: url() }),
    (b) => {
      b.subscriber(new RedisStream(key, { group, consumer: "ts-1", blockMs: 100, ...options }), {
        codec: bytesCodec,
      }).handle((payload: Uint8Array, ctx: HandlerContext) => {
        handled.push({
          payload: text(payload),
          attempt: ctx.attempt,
          redeliveryCount: ctx.delivery.redeliveryCount,
        });
      });
    },
  );
  t = await TestApp.startLive(app);
  return handled;
}

async function tsPublish(key: string, payloads: readonly string[]): Promise<void> {
  const broker = await new RedisBroker({ url: url() }).connect();
  try {
    const publisher = await new RedisPublish().pair(broker);
    for (const p of payloads) {
      await publisher.publish({
        name: key,
        payload: bytes(p),
        headers: new HeaderMap([["content-type", "text/plain"]]),
      });
    }
  } finally {
    await broker.shutdown();
  }
}

/** Entries pending for one consumer of the group. */
async function pendingFor(key: string, group: string, consumer: string): Promise<number> {
  const rows = (await redis.xpending(key, group, "-", "+", 1000, consumer)) as unknown[];
  return rows.length;
}

const names = (prefix: string, count: number) =>
  [...Array(count).keys()].map((i) => `${prefix}${i}`);

interopSuite("one Redis consumer group, a TypeScript and a Rust consumer", () => {
  it("share the work: every entry, whichever language published it, handled once by one of them", async () => {
    const key = uniqueName("interop-group-shared");
    await redis.xgroup("CREATE", key, "shared", "$", "MKSTREAM");
    const ts = await tsConsumer(key, "shared");
    const rust = await RustService.start({
      transport: "stream",
      url: url(),
      consume: { key, group: "shared", consumer: "rust-1", block_ms: 100 },
    });
    const fromTs = names("t", 100);
    const fromRust = names("r", 100);
    // Interleaved, one at a time: each entry wakes whichever consumer is waiting.
    for (let i = 0; i < 100; i++) {
      await tsPublish(key, [fromTs[i]!]);
      await rust.publish({ key, payload: bytes(fromRust[i]!) });
    }
    const all = () => [...ts.map((h) => h.payload), ...rust.deliveries.map((d) => text(d.payload))];
    await eventually("200 entries handled", () => all().length >= 200);
    await eventually(
      "every entry acknowledged",
      async () => (await pendingCount(redis, key, "shared")) === 0,
    );
    expect(all().sort()).toEqual([...fromTs, ...fromRust].sort());
    // Both did part of it, and every delivery was a first one.
    expect(ts.length).toBeGreaterThan(0);
    expect(rust.deliveries.length).toBeGreaterThan(0);
    expect(ts.every((h) => h.attempt === 1)).toBe(true);
    expect(rust.deliveries.every((d) => d.attempt === 1 && d.via === "stream")).toBe(true);
  });

  it("a Rust consumer killed with entries pending: the TypeScript consumer reclaims them, counting the Rust delivery", async () => {
    const key = uniqueName("interop-group-rust-killed");
    const payloads = names("m", 10);
    await redis.xgroup("CREATE", key, "g", "$", "MKSTREAM");
    await tsPublish(key, payloads);
    // The Rust service reads all ten in one read and holds the first in its handler.
    const rust = await RustService.start({
      transport: "stream",
      url: url(),
      consume: { key, group: "g", consumer: "rust-1", hold: true },
    });
    await rust.waitForDeliveries(1);
    await eventually(
      "all ten pending on the Rust consumer",
      async () => (await pendingFor(key, "g", "rust-1")) === 10,
    );
    await rust.kill();
    const ts = await tsConsumer(key, "g", { reclaimIdleMs: 300 });
    await eventually("the TypeScript consumer handled all ten", () => ts.length >= 10);
    await eventually("nothing pending", async () => (await pendingCount(redis, key, "g")) === 0);
    expect(ts.map((h) => h.payload).sort()).toEqual([...payloads].sort());
    // Delivered twice each, once to the Rust consumer's read and once to the reclaim: the count
    // both runtimes read.
    expect(ts.map((h) => [h.redeliveryCount, h.attempt])).toEqual(payloads.map(() => [2, 2]));
    expect(rust.deliveries.map((d) => [text(d.payload), d.outcome])).toEqual([["m0", "hold"]]);
  });

  it("a TypeScript consumer killed with entries pending: a Rust consumer's reclaiming subscription takes them", async () => {
    const key = uniqueName("interop-group-ts-killed");
    const payloads = names("m", 10);
    await redis.xgroup("CREATE", key, "g", "$", "MKSTREAM");
    await tsPublish(key, payloads);
    const held: string[] = [];
    const holder = await tsHolder(key, "g", "ts-1", held);
    await eventually("the TypeScript service holding the first", () => held.length === 1);
    await eventually(
      "all ten pending on the TypeScript consumer",
      async () => (await pendingFor(key, "g", "ts-1")) === 10,
    );
    holder.child.kill("SIGKILL");
    const rust = await RustService.start({
      transport: "stream",
      url: url(),
      consume: { key, group: "g", consumer: "rust-1", reclaim_ms: 300, block_ms: 100 },
    });
    await rust.waitForDeliveries(10);
    await eventually("nothing pending", async () => (await pendingCount(redis, key, "g")) === 0);
    expect(rust.deliveries.map((d) => text(d.payload)).sort()).toEqual([...payloads].sort());
    // Reclaimed with XAUTOCLAIM, their count from XPENDING: the TypeScript read and this one.
    expect(rust.deliveries.map((d) => [d.via, d.attempt])).toEqual(
      payloads.map(() => ["reclaim", 2]),
    );
    expect(held).toEqual(["m0"]);
  });
});

/** A TypeScript service process (fixtures/interopHolder.ts) that reads a batch and never settles it. */
function tsHolder(
  key: string,
  group: string,
  consumer: string,
  held: string[],
): Promise<ChildService> {
  return startService({
    fixture: fileURLToPath(new URL("./fixtures/interopHolder.ts", import.meta.url)),
    args: [url(), key, group, consumer],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    onLine: (line) => {
      if (line.startsWith("held ")) held.push(line.slice(5));
    },
  });
}

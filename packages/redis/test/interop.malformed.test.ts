import { bytes as bytesCodec, RustStream, readDeadLetterOrigin } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import { requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, expect, it } from "vitest";
import { RedisBroker, RedisStream } from "../src/index.js";
import { entries, eventually, inspect, pendingCount } from "./appSupport.js";

// An entry with no `_payload` field, as another framework writes one (FastStream keeps its message
// in `__data__`), on a stream a TypeScript and a RustStream service read. It is not a RustStream
// message: what each reader makes of it.

const url = () => requireEnv("REDIS_URL");
const redis = inspect(url());
let t: TestApp | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});
afterAll(() => redis.disconnect());

/** FastStream's layout: the whole message (its own headers inside) in one `__data__` field. */
async function fastStreamEntry(key: string): Promise<void> {
  await redis.xadd(
    key,
    "*",
    "__data__",
    Buffer.from('\x00\x01{"content-type":"application/json"}{"id":1}'),
  );
}

interopSuite("a stream entry with no payload field (FastStream's __data__ layout)", () => {
  it("our JSON subscriber settles it by its decode policy: dead letter, reason decode, nothing handled, and it reads on", async () => {
    const key = uniqueName("interop-nopayload-dlq");
    const dlq = `${key}.dlq`;
    const handled: unknown[] = [];
    const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
      new RedisBroker({ url: url(), group: "ts" }),
      (b) => {
        b.subscriber(new RedisStream(key, { blockMs: 100 }))
          .deadLetter(dlq)
          .handle((message) => {
            handled.push(message);
          });
      },
    );
    t = await TestApp.startLive(app);
    await fastStreamEntry(key);
    await t.publish(key, { id: 2 });
    await eventually("both settled", () => t!.subscriber(key).outcomes.length === 2);
    expect(t.subscriber(key).outcomes).toEqual(["dead-letter", "ack"]);
    expect(handled).toEqual([{ id: 2 }]);
    const [dead] = await entries(redis, dlq);
    expect(dead!.payload.length).toBe(0);
    expect(readDeadLetterOrigin(dead!.headers)).toMatchObject({ source: key, reason: "decode" });
    expect(await pendingCount(redis, key, "ts")).toBe(0);
  });

  it("our JSON subscriber without a dead letter drops it (acknowledged, never handled)", async () => {
    const key = uniqueName("interop-nopayload-drop");
    const handled: unknown[] = [];
    const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
      new RedisBroker({ url: url(), group: "ts" }),
      (b) => {
        b.subscriber(new RedisStream(key, { blockMs: 100 })).handle((message) => {
          handled.push(message);
        });
      },
    );
    t = await TestApp.startLive(app);
    await fastStreamEntry(key);
    await t.publish(key, { id: 2 });
    await eventually("both settled", () => t!.subscriber(key).outcomes.length === 2);
    expect(t.subscriber(key).outcomes).toEqual(["drop", "ack"]);
    expect(t.subscriber(key).decodeFailures).toHaveLength(1);
    expect(handled).toEqual([{ id: 2 }]);
    expect(await pendingCount(redis, key, "ts")).toBe(0);
  });

  it("our subscriber on the bytes codec, which decodes anything, is never handed it: the entry is unreadable, so its decode policy drops it", async () => {
    const key = uniqueName("interop-nopayload-bytes");
    const handled: string[] = [];
    const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
      new RedisBroker({ url: url(), group: "ts" }),
      (b) => {
        b.subscriber(new RedisStream(key, { blockMs: 100 }), { codec: bytesCodec }).handle(
          (payload: Uint8Array) => {
            handled.push(text(payload));
          },
        );
      },
    );
    t = await TestApp.startLive(app);
    await fastStreamEntry(key);
    await t.publish(key, "after");
    await eventually("both settled", () => t!.subscriber(key).outcomes.length === 2);
    expect(t.subscriber(key).outcomes).toEqual(["drop", "ack"]);
    const [failure] = t.subscriber(key).decodeFailures;
    expect(String(failure)).toMatch(/has no "_payload" field/);
    expect(handled).toEqual(['"after"']);
    expect(await pendingCount(redis, key, "ts")).toBe(0);
  });

  it("RustStream reads it as an empty payload with no headers: its raw handler runs on it, its JSON handler drops it", async () => {
    const key = uniqueName("interop-nopayload-rust");
    await redis.xgroup("CREATE", key, "raw", "$", "MKSTREAM");
    await redis.xgroup("CREATE", key, "json", "$");
    const raw = await RustService.start({
      transport: "stream",
      url: url(),
      consume: { key, group: "raw", consumer: "rust-raw" },
    });
    const json = await RustService.start({
      transport: "stream",
      url: url(),
      consume: { key, group: "json", consumer: "rust-json", codec: "json" },
    });
    await fastStreamEntry(key);
    await raw.waitForDeliveries(1);
    expect(raw.deliveries.map((d) => [d.payload.length, d.headers.length, d.outcome])).toEqual([
      [0, 0, "ack"],
    ]);
    await eventually("the JSON handler's decode failure", () => json.decodeFailures.length === 1);
    expect(json.decodeFailures[0]!.length).toBe(0);
    expect(json.deliveries).toEqual([]);
    await eventually(
      "both groups settled it",
      async () =>
        (await pendingCount(redis, key, "raw")) + (await pendingCount(redis, key, "json")) === 0,
    );
  });
});

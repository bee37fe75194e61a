import {
  bytes as bytesCodec,
  type Delivery,
  type HandlerContext,
  HeaderMap,
  RustStream,
  readDeadLetterOrigin,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import {
  interopSuite,
  killRustServices,
  type RustDelivery,
  RustService,
} from "@ruststream/tooling-interop";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  RedisBroker,
  RedisList,
  RedisPublish,
  RedisPubSub,
  RedisStream,
  type RedisTransport,
} from "../src/index.js";
import { entries, eventually, inspect, pendingCount } from "./appSupport.js";

// One stream, list or channel, a TypeScript service and a RustStream service (ruststream-fred
// 0.7.1, through tooling/interop) on it: what one publishes, the other reads byte for byte, and
// what the reading side cannot decode is settled by the reading side's own policy.

const url = () => requireEnv("REDIS_URL");
const redis = inspect(url());
let t: TestApp | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});
afterAll(() => redis.disconnect());

/** The messages each side publishes: each pins part of the wire. */
const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
const messages = [
  {
    payload: bytes('{"order":1,"sku":"A-1"}'),
    // Names lowercased by both maps; values binary, empty, or text with a colon; the retry count
    // of a message that had two deliveries already.
    headers: [
      ["content-type", "application/json"],
      ["X-Tenant-Id", "acme"],
      ["x-binary", Uint8Array.of(0x00, 0x80, 0x0d, 0x0a, 0xfe, 0xff)],
      ["x-empty", ""],
      ["x-url", "http://example.com:8080/a b"],
      ["x-ruststream-retry-count", "2"],
      ["correlation-id", "6f1c2a90-order-1"],
    ] as [string, Uint8Array | string][],
    partitionKey: bytes("A-1"),
    attempt: 3,
  },
  {
    payload: binary,
    headers: [["content-type", "application/octet-stream"]] as [string, Uint8Array | string][],
    partitionKey: Uint8Array.of(0xff, 0x00, 0x41),
    attempt: 1,
  },
  // No headers, no key: the frame of a list value and a channel message is then the bare one.
  { payload: bytes("plain"), headers: [] as [string, Uint8Array | string][], attempt: 1 },
] as const;

const hex = (value: Uint8Array | string) =>
  Buffer.from(typeof value === "string" ? bytes(value) : value).toString("hex");
/** Headers as a sorted list of [name, hex]: Rust reads stream fields into a hash map, so order is not part of the contract. */
const sorted = (headers: Iterable<readonly [string, Uint8Array | string]>) =>
  [...headers]
    .map(([n, v]) => [n, hex(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
/** What every reader must see: the names lowercased, the partition key as the crate's header. */
function expectedHeaders(m: (typeof messages)[number]) {
  const all: [string, Uint8Array | string][] = m.headers.map(([n, v]) => [n.toLowerCase(), v]);
  if ("partitionKey" in m) all.push(["redis-partition-key", m.partitionKey]);
  return sorted(all);
}

interface Seen {
  readonly payload: Uint8Array;
  readonly headers: HeaderMap;
  readonly partitionKey: Uint8Array | undefined;
  readonly attempt: number;
}

const transports: RedisTransport[] = ["stream", "list", "pubsub"];

function source(transport: RedisTransport, key: string) {
  switch (transport) {
    case "stream":
      return new RedisStream(key, { blockMs: 100 });
    case "list":
      return new RedisList(key, { blockMs: 100 });
    case "pubsub":
      return new RedisPubSub(key);
  }
}

/** A TypeScript service reading `key` raw, recording each delivery as its handler saw it. */
async function tsReader(transport: RedisTransport, key: string): Promise<Seen[]> {
  const seen: Seen[] = [];
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
    new RedisBroker({ url: url(), group: "ts" }),
    (b) => {
      b.subscriber(source(transport, key), { codec: bytesCodec }).handle(
        (payload: Uint8Array, ctx: HandlerContext) => {
          const d: Delivery = ctx.delivery;
          seen.push({
            payload: payload.slice(),
            headers: ctx.headers.clone(),
            partitionKey: d.partitionKey?.slice(),
            attempt: ctx.attempt,
          });
        },
      );
    },
  );
  t = await TestApp.startLive(app);
  return seen;
}

/** A TypeScript service reading `key` as JSON, dead-lettering what does not decode. */
async function tsJsonReader(
  transport: RedisTransport,
  key: string,
  dlq: string,
): Promise<unknown[]> {
  const handled: unknown[] = [];
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
    new RedisBroker({ url: url(), group: "ts" }),
    (b) => {
      b.subscriber(source(transport, key))
        .deadLetter(dlq)
        .handle((message) => {
          handled.push(message);
        });
    },
  );
  t = await TestApp.startLive(app);
  return handled;
}

async function tsPublish(
  transport: RedisTransport,
  ...out: { name: string; payload: Uint8Array; headers?: HeaderMap; partitionKey?: Uint8Array }[]
): Promise<void> {
  const broker = await new RedisBroker({ url: url() }).connect();
  try {
    const publisher = await new RedisPublish({ transport }).pair(broker);
    for (const m of out) await publisher.publish(m);
  } finally {
    await broker.shutdown();
  }
}

/** Waits until the Rust service's subscription is there to receive what is published next. */
async function rustListening(transport: RedisTransport, key: string): Promise<void> {
  if (transport !== "pubsub") return;
  await eventually("the Rust subscriber on the channel", async () => {
    const [, count] = (await redis.pubsub("NUMSUB", key)) as [string, number];
    return Number(count) >= 1;
  });
}

/** A stream's group exists before anything is published, whichever side creates it. */
async function group(transport: RedisTransport, key: string, name: string): Promise<void> {
  if (transport === "stream") await redis.xgroup("CREATE", key, name, "$", "MKSTREAM");
}

const asRustSaw = (d: RustDelivery) => ({
  payload: hex(d.payload),
  headers: sorted(d.headers),
  partitionKey: d.partitionKey === null ? null : hex(d.partitionKey),
  retryCount: d.retryCount,
  attempt: d.attempt,
  contentType: d.contentType,
});

interopSuite("RustStream and TypeScript on one Redis stream, list and channel", () => {
  describe.each(transports)("RustStream and TypeScript on one Redis %s", (transport) => {
    it("a Rust service's messages reach a TypeScript handler: payload, every header byte for byte, partition key, retry count, content type", async () => {
      const key = uniqueName(`interop-${transport}-r2t`);
      const seen = await tsReader(transport, key);
      const rust = await RustService.start({ transport, url: url() });
      await rust.publish(...messages.map((m) => ({ key, ...m })));
      await eventually(
        "the TypeScript handler saw all three",
        () => seen.length === messages.length,
      );
      expect(
        seen.map((s) => ({
          payload: hex(s.payload),
          headers: sorted(s.headers),
          partitionKey: s.partitionKey === undefined ? null : hex(s.partitionKey),
          retryCount: Number(s.headers.getString("x-ruststream-retry-count") ?? 0),
          attempt: s.attempt,
          contentType: s.headers.getString("content-type") ?? null,
        })),
      ).toEqual(
        messages.map((m) => ({
          payload: hex(m.payload),
          headers: expectedHeaders(m),
          partitionKey: "partitionKey" in m ? hex(m.partitionKey) : null,
          retryCount: m === messages[0] ? 2 : 0,
          attempt: m.attempt,
          contentType: m.headers.find(([n]) => n === "content-type")?.[1] ?? null,
        })),
      );
    });

    it("a TypeScript service's messages reach a Rust handler: payload, every header byte for byte, partition key, retry count, content type", async () => {
      const key = uniqueName(`interop-${transport}-t2r`);
      await group(transport, key, "rust");
      const rust = await RustService.start({
        transport,
        url: url(),
        consume: { key, group: "rust" },
      });
      await rustListening(transport, key);
      await tsPublish(
        transport,
        ...messages.map((m) => ({
          name: key,
          payload: m.payload,
          headers: new HeaderMap(m.headers),
          ...("partitionKey" in m ? { partitionKey: m.partitionKey } : {}),
        })),
      );
      await rust.waitForDeliveries(messages.length);
      expect(rust.deliveries.map(asRustSaw)).toEqual(
        messages.map((m) => ({
          payload: hex(m.payload),
          headers: expectedHeaders(m),
          partitionKey: "partitionKey" in m ? hex(m.partitionKey) : null,
          retryCount: m === messages[0] ? 2 : 0,
          // The runtime's count for a first delivery off the tail: the header plus this one.
          attempt: m.attempt,
          contentType:
            (m.headers.find(([n]) => n === "content-type")?.[1] as string | undefined) ?? null,
        })),
      );
      expect((await rust.report()).map(asRustSaw)).toEqual(rust.deliveries.map(asRustSaw));
      expect(rust.deliveries.every((d) => d.outcome === "ack")).toBe(true);
      if (transport === "stream") expect(await pendingCount(redis, key, "rust")).toBe(0);
      if (transport === "list") expect(await redis.llen(`${key}.processing`)).toBe(0);
    });

    it("a header with an empty name, which RustStream's map holds and ours cannot: the payload and the other headers arrive, the nameless header is left out", async () => {
      const key = uniqueName(`interop-${transport}-empty-name`);
      const seen = await tsReader(transport, key);
      const rust = await RustService.start({ transport, url: url() });
      await rust.publish({
        key,
        payload: bytes("nameless"),
        headers: [
          ["", "no name"],
          ["x-after", "kept"],
        ],
      });
      await eventually("the TypeScript handler saw it", () => seen.length === 1);
      expect(text(seen[0]!.payload)).toBe("nameless");
      expect(sorted(seen[0]!.headers)).toEqual(sorted([["x-after", "kept"]]));
    });

    it("what a Rust service publishes and a TypeScript JSON subscriber cannot decode goes to its dead letter (its decode policy), and it reads on", async () => {
      const key = uniqueName(`interop-${transport}-r2t-decode`);
      const dlq = `${key}.dlq`;
      const handled = await tsJsonReader(transport, key, dlq);
      const rust = await RustService.start({ transport, url: url() });
      await rust.publish(
        { key, payload: bytes("not json"), headers: [["content-type", "text/plain"]] },
        { key, payload: bytes('{"ok":1}') },
      );
      await eventually("the good message handled", () => handled.length === 1);
      await eventually("the dead letter", async () => (await redis.xlen(dlq)) === 1);
      expect(handled).toEqual([{ ok: 1 }]);
      const [dead] = await entries(redis, dlq);
      expect(dead!.payload.toString()).toBe("not json");
      expect(dead!.headers.getString("content-type")).toBe("text/plain");
      expect(readDeadLetterOrigin(dead!.headers)).toMatchObject({ source: key, reason: "decode" });
      expect(t!.subscriber(key).outcomes).toEqual(["dead-letter", "ack"]);
    });

    it("what a TypeScript service publishes and a Rust JSON subscriber cannot decode is dropped by RustStream's decode policy (it has no dead letter for it), and it reads on", async () => {
      const key = uniqueName(`interop-${transport}-t2r-decode`);
      const dlq = `${key}.dlq`;
      await group(transport, key, "rust");
      const rust = await RustService.start({
        transport,
        url: url(),
        consume: { key, group: "rust", codec: "json", dead_letter: dlq },
      });
      await rustListening(transport, key);
      await tsPublish(
        transport,
        { name: key, payload: bytes("not json") },
        { name: key, payload: bytes('{"ok":1}') },
      );
      await rust.waitForDeliveries(1);
      expect(rust.decodeFailures.map((p) => p.toString())).toEqual(["not json"]);
      expect(rust.deliveries.map((d) => text(d.payload))).toEqual(['{"ok":1}']);
      // Settled, not left behind, and not dead-lettered: RustStream's decode policy is a drop.
      if (transport === "stream") {
        await eventually(
          "both settled",
          async () => (await pendingCount(redis, key, "rust")) === 0,
        );
      }
      if (transport === "list") {
        await eventually("both settled", async () => (await redis.llen(`${key}.processing`)) === 0);
        expect(await redis.llen(key)).toBe(0);
      }
      expect(await redis.exists(dlq)).toBe(0);
    });
  });
});

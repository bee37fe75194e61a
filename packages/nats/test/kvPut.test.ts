import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import {
  type Codec,
  HeaderMap,
  isRustStreamError,
  json,
  bytes as rawCodec,
} from "@ruststream/core";
import { msgpackCodec } from "@ruststream/core/msgpack";
import { bytes, requireEnv, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type KvBucket,
  type KvEntry,
  kvSubject,
  NatsBroker,
  NatsKv,
  NatsPublish,
} from "../src/index.js";
import { eventually, rawClient } from "./env.live.js";
import { bytesOf, letPass, read, setUp } from "./kvSupport.js";
import { openedPerTest, targets } from "./targets.js";

// A KvBucket's puts: a plain put, a compare-and-set update, a create of a key that holds no value
// (none, or a delete or purge marker), through the codec. On the real server and on the stand-in
// alike; then the official KV client reading what ours wrote, and ours creating on its markers.

const opened = openedPerTest();
const msgpack = msgpackCodec();

/** What `work` was refused with, as `code: message`. */
async function refusal(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error === undefined) return "stored";
  expect(isRustStreamError(error), String(error)).toBe(true);
  return `${(error as { code: string }).code}: ${(error as Error).message}`;
}

/** An entry's value (bytes as `bytes: <their text>`), or its operation. */
function entryValue(entry: KvEntry | undefined): unknown {
  if (entry?.operation !== "put") return entry?.operation;
  return entry.value instanceof Uint8Array ? `bytes: ${text(entry.value)}` : entry.value;
}

/** The key's latest value, decoded by its content type. */
async function latestValue(kv: KvBucket, key: string): Promise<unknown> {
  const entry = await kv.get(key);
  return entry?.operation === "put" ? entry.value : entry?.operation;
}

for (const [where, connect] of targets) {
  describe(`KV puts, ${where}`, () => {
    it("put: the value through the codec (JSON by default), resolving with its revision", async () => {
      const { kv } = await setUp(opened, connect, 3);
      expect(await kv.put("flags.dark", { on: true })).toBe(1n);
      expect(await kv.put("flags.dark", { on: false })).toBe(2n);
      expect(await kv.put("raw", bytes("as is"), { codec: rawCodec })).toBe(3n);
      expect(await latestValue(kv, "flags.dark")).toEqual({ on: false });
      const raw = await kv.get("raw");
      expect(raw?.operation === "put" ? text(bytesOf(raw.value)) : raw?.operation).toBe("as is");
      expect((await kv.history("flags.dark")).map((e) => e.revision)).toEqual([1n, 2n]);
    });

    it("get and history with a codec: a value decoded by it whatever its content-type, a marker as it is; a value it cannot decode is refused naming the fix", async () => {
      const { bucket, kv } = await setUp(opened, connect, 5);
      await kv.put("flags.dark", { on: true });
      await kv.put("raw", bytes("as is"), { codec: rawCodec });
      await kv.delete("flags.dark");
      await kv.put("flags.dark", { on: false });
      expect(await kv.get("flags.dark", { codec: json })).toMatchObject({
        operation: "put",
        value: { on: false },
        revision: 4n,
      });
      expect(await kv.get("flags.dark", { codec: json, revision: 1 })).toMatchObject({
        value: { on: true },
      });
      expect(
        (await kv.history("flags.dark", { codec: json })).map((e) =>
          e.operation === "put" ? e.value : e.operation,
        ),
      ).toEqual([{ on: true }, "delete", { on: false }]);
      // Core's bytes: the bytes the put stored, past the content-type's codec.
      const plain = await kv.get("flags.dark", { codec: rawCodec });
      expect(plain?.operation === "put" ? text(plain.value) : plain?.operation).toBe(
        '{"on":false}',
      );
      expect(await refusal(kv.get("raw", { codec: json }))).toBe(
        `invalid-argument: the value of the key "raw" at revision 2 of the KV bucket "${bucket}" is not application/json (its content-type: application/octet-stream): read it with the codec its put took, or without one for the codec of its content-type`,
      );
    });

    it("get and history without a codec: each value by its content-type's codec, bytes without one; a content-type no codec decodes refused naming the codecs known", async () => {
      const { connected, bucket, put, kv } = await setUp(opened, connect, 5);
      const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
      const typed = (key: string, payload: string, contentType: string) =>
        publisher.publish({
          name: kvSubject(bucket, key),
          payload: bytes(payload),
          headers: new HeaderMap([["content-type", contentType]]),
        });
      await kv.put("v", { n: 1 });
      await kv.put("v", bytes("as is"), { codec: rawCodec });
      await kv.put("v", { n: 2 }, { codec: msgpack });
      await kv.delete("v");
      await put("v", "no content-type");
      // Core's json and bytes are known to every bucket: a value by its own entry's codec.
      const at = async (revision?: number) =>
        entryValue(await kv.get("v", revision === undefined ? {} : { revision }));
      expect([await at(1), await at(2), await at()]).toEqual([
        { n: 1 },
        "bytes: as is",
        "bytes: no content-type",
      ]);
      // MessagePack is not, until the bucket is given it; then the history reads every entry.
      const refused = `invalid-argument: the value of the key "v" at revision 3 of the KV bucket "${bucket}" has the content-type application/msgpack, which none of the codecs the bucket's reads know decodes (application/json, application/octet-stream): give its codec in new NatsKv(bucket, { codecs }), or read it with { codec } (core's bytes for its bytes)`;
      expect(await refusal(kv.get("v", { revision: 3 }))).toBe(refused);
      expect(await refusal(kv.history("v"))).toBe(refused);
      const known = await new NatsKv(bucket, { codecs: [msgpack] }).pair(connected);
      expect((await known.history("v")).map(entryValue)).toEqual([
        { n: 1 },
        "bytes: as is",
        { n: 2 },
        "delete",
        "bytes: no content-type",
      ]);
      // Reads that want no value decode none: the key is listed, a create refused for its value.
      await kv.put("m", { n: 3 }, { codec: msgpack });
      expect(await kv.keys()).toEqual(["v", "m"]);
      expect(await refusal(kv.create("m", 4))).toContain("holds a value (at revision 6)");
      // A media type is matched without its parameters and case; a value its codec cannot
      // decode is refused, naming the content type.
      await typed("p", '{"n":5}', "Application/JSON; charset=utf-8");
      expect(await kv.get("p")).toMatchObject({ value: { n: 5 } });
      await typed("bad", "not json", "application/json");
      expect(await refusal(kv.get("bad"))).toBe(
        `invalid-argument: the value of the key "bad" at revision 8 of the KV bucket "${bucket}" is not the application/json its content-type says: read it with { codec } (core's bytes for its bytes)`,
      );
      // A given codec of application/json replaces core's json.
      const own = await new NatsKv(bucket, {
        codecs: [{ ...json, decode: (payload) => ({ own: text(payload) }) }],
      }).pair(connected);
      expect(await own.get("bad")).toMatchObject({ value: { own: "not json" } });
    });

    it("codecs that are not a list of codecs, or two of one content type, are refused naming the fix", () => {
      const refusedWith = (codecs: unknown) => {
        try {
          new NatsKv("b", { codecs: codecs as Codec<unknown>[] });
          return "accepted";
        } catch (error) {
          return String((error as Error).message);
        }
      };
      expect(refusedWith([msgpack, msgpackCodec({ maxDepth: 10 })])).toBe(
        "NatsKv: two of codecs decode application/msgpack: give one codec a content type",
      );
      expect(refusedWith(json)).toContain("NatsKv: codecs is a list of codecs");
      expect(refusedWith([{ contentType: "x/y" }])).toContain("NatsKv: each of codecs is a codec");
      expect(refusedWith([msgpack])).toBe("accepted");
    });

    it("put with a revision, and update: a compare-and-set naming the key, the expected and the actual revision", async () => {
      const { bucket, kv } = await setUp(opened, connect, 5);
      expect(await kv.put("a", 1, { revision: 0 })).toBe(1n);
      expect(await refusal(kv.put("a", 2, { revision: 0 }))).toBe(
        `publish-refused: the key "a" of the KV bucket "${bucket}" is not at revision 0 (it is at 1): the compare-and-set put stored nothing; read the key again and put with its revision (0: the key has no entry)`,
      );
      expect(await kv.update("a", 2, 1n)).toBe(2n);
      expect(await refusal(kv.update("a", 3, 1))).toContain(
        `the key "a" of the KV bucket "${bucket}" is not at revision 1 (it is at 2)`,
      );
      expect(await kv.put("a", 3, { revision: 2 })).toBe(3n);
      // A key with no entry is at no revision: an update expecting one is refused.
      expect(await refusal(kv.update("b", 1, 3))).toContain(
        `the key "b" of the KV bucket "${bucket}" is not at revision 3`,
      );
      // Of two updates from the same revision, one is stored.
      const both = await Promise.allSettled([kv.update("a", 4, 3), kv.update("a", 5, 3)]);
      expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      expect((await kv.history("a")).map((e) => e.revision)).toEqual([1n, 2n, 3n, 4n]);
      expect([4, 5]).toContain(await latestValue(kv, "a"));
      // Bad revisions, refused before anything is sent.
      expect(await refusal(kv.update("a", 6, 0))).toContain(
        "a KV revision is a whole number from 1",
      );
      expect(await refusal(kv.put("a", 6, { revision: -1 }))).toContain(
        "a KV revision is a whole number from 0",
      );
      expect(await refusal(kv.put("a.*", 6))).toContain("no wildcards");
      expect((await kv.history("a")).length).toBe(4);
    });

    it("create: only where the key holds no value, a delete's or a purge's marker too", async () => {
      const { bucket, kv } = await setUp(opened, connect, 5);
      expect(await kv.create("k", "first")).toBe(1n);
      expect(await refusal(kv.create("k", "again"))).toBe(
        `publish-refused: KvBucket.create: the key "k" of the KV bucket "${bucket}" holds a value (at revision 1): nothing stored; update(key, value, 1) replaces it`,
      );
      await kv.delete("k");
      expect(await kv.create("k", "after delete")).toBe(3n);
      await kv.purge("k");
      expect(await kv.create("k", "after purge")).toBe(5n);
      expect(await read(kv, "k")).toBe('k="after purge"@5 put');
      // Of two creates of one key at once, one is stored.
      const both = await Promise.allSettled([kv.create("n", 1), kv.create("n", 2)]);
      expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      expect((await kv.history("n")).length).toBe(1);
    });

    it("a put's own TTL: the entry goes after it, the server's marker read as a purge", async () => {
      const { connected, kv } = await setUp(opened, connect, 1, { markerTtlMs: 5000 });
      expect(await kv.put("t", 1, { ttlMs: 1000 })).toBe(1n);
      expect(await kv.create("kept", 1, { ttlMs: "never" })).toBe(2n);
      letPass(connected, 1000);
      await eventually(
        async () => (await kv.get("t"))?.operation === "purge",
        10_000,
        "the server's marker once the put's TTL ran out",
      );
      expect(await read(kv, "kept")).toBe("kept=1@2 put");
    }, 20_000);

    it("a put's own TTL where the bucket takes none is refused, storing nothing", async () => {
      const { kv } = await setUp(opened, connect);
      expect(await refusal(kv.put("t", 1, { ttlMs: 5000 }))).toContain(
        "takes no per-message TTL: allow it (allow_msg_ttl",
      );
      expect(await refusal(kv.create("t", 1, { ttlMs: 5000 }))).toContain("unsupported");
      expect(await kv.history("t")).toEqual([]);
    });

    it("after shutdown, a put, a create and an update reject closed", async () => {
      const { connected, kv } = await setUp(opened, connect);
      await connected.shutdown();
      for (const work of [kv.put("a", 1), kv.create("a", 1), kv.update("a", 1, 1)])
        expect(await refusal(work)).toMatch(/^closed: /);
    });
  });
}

const live = () => new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();

describe("KV puts with the official KV client, on the real server", () => {
  it("it reads our puts and creates, and ours create on its markers and update its revisions", async () => {
    const { kv } = await setUp(opened, live, 5);
    const nc = await rawClient();
    try {
      const theirs = await new Kvm(jetstream(nc)).open(kv.bucket);
      expect(await kv.put("a", { n: 1 })).toBe(1n);
      const entry = await theirs.get("a");
      expect([entry?.operation, entry?.revision, entry?.json()]).toEqual(["PUT", 1, { n: 1 }]);
      // The content type a publish writes, on the entry.
      const jsm = await jetstreamManager(nc);
      const stored = await jsm.streams.getMessage(`KV_${kv.bucket}`, { seq: 1 });
      expect(stored?.header.get("content-type")).toBe("application/json");
      // Its update at our revision; ours at its.
      expect(await theirs.update("a", JSON.stringify({ n: 2 }), 1)).toBe(2);
      expect(await kv.update("a", { n: 3 }, 2)).toBe(3n);
      expect((await theirs.get("a"))?.json()).toEqual({ n: 3 });
      // Its delete, then our create on the marker; its create refused on our value.
      await theirs.delete("a");
      expect(await kv.create("a", { n: 4 })).toBe(5n);
      await expect(theirs.create("a", "x")).rejects.toThrow(/wrong last sequence/);
      // Our delete, then its create on our marker; our create refused on its value.
      await kv.delete("a");
      expect(await theirs.create("a", JSON.stringify({ n: 5 }))).toBe(7);
      expect(await refusal(kv.create("a", { n: 6 }))).toContain("holds a value (at revision 7)");
      // The bucket keeps five entries a key.
      const their = [];
      for await (const e of await theirs.history({ key: "a" }))
        their.push(`${e.operation}@${e.revision}`);
      expect(their).toEqual(["PUT@3", "DEL@4", "PUT@5", "DEL@6", "PUT@7"]);
    } finally {
      await nc.close();
    }
  });
});

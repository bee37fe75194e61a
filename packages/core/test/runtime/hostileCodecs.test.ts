import { encode as cborEncode } from "cbor-x";
import { describe, expect, test } from "vitest";
import { cbor, cborCodec } from "../../src/codec/cbor.js";
import type { Codec } from "../../src/codec/codec.js";
import { msgpack, msgpackCodec } from "../../src/codec/msgpack.js";
import {
  isRustStreamError,
  json,
  jsonCodec,
  type LogEntry,
  lineLogger,
  MemoryBroker,
  RustStream,
  readDeadLetterOrigin,
} from "../../src/index.js";
import { startInProcess } from "./harness.js";

// Payloads someone else wrote: each codec refuses, with core's error, what it cannot decode in
// bounded time and memory, and the runtime settles the refusal like any decode failure.

/** A CBOR bignum (tag 2) of `size` bytes: cbor-x converts one in time growing with its square. */
function cborBignum(size: number): Uint8Array {
  const bytes = new Uint8Array(6 + size).fill(0xab);
  bytes.set([0xc2, 0x5a, size >>> 24, (size >>> 16) & 0xff, (size >>> 8) & 0xff, size & 0xff]);
  return bytes;
}

/** `depth` arrays, one inside the next, the innermost empty, in each codec's bytes. */
const nested: Record<string, (depth: number) => Uint8Array> = {
  json: (depth) => new TextEncoder().encode("[".repeat(depth) + "]".repeat(depth)),
  msgpack: (depth) => new Uint8Array(depth).fill(0x91).fill(0x90, depth - 1),
  cbor: (depth) => new Uint8Array(depth).fill(0x81).fill(0x80, depth - 1),
};

function refusal(codec: Codec, payload: Uint8Array): Error {
  try {
    codec.decode(payload);
  } catch (error) {
    expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
    return error as Error;
  }
  throw new Error("expected the codec to refuse the payload, and it decoded it");
}

describe("a CBOR bignum", () => {
  test("of 256 KiB is refused at once (cbor-x took 35 s on it), naming the limit to raise", () => {
    expect(refusal(cbor, cborBignum(256 * 1024)).message).toMatch(
      /a bignum of 262144 bytes, over the limit of 128 .* raise maxBignumBytes/,
    );
  });

  test("within the limit decodes, and the limit is the codec's to set", () => {
    expect(cbor.decode(cborEncode(2n ** 1000n))).toBe(2n ** 1000n);
    expect(cbor.decode(cborBignum(128))).toBeTypeOf("bigint");
    expect(refusal(cbor, cborBignum(129)).message).toMatch(/maxBignumBytes/);
    expect(cborCodec({ maxBignumBytes: 1024 }).decode(cborBignum(1000))).toBeTypeOf("bigint");
  });
});

describe.each([
  ["json", json, jsonCodec, 10_000],
  ["msgpack", msgpack, msgpackCodec, 10_000],
  ["cbor", cbor, cborCodec, 512],
] as const)("%s nesting", (name, codec, make, limit) => {
  const bytes = nested[name]!;

  test(`past ${limit} levels is refused before decoding, naming the limit to raise`, () => {
    expect(refusal(codec, bytes(limit + 1)).message).toMatch(
      new RegExp(`nesting ${limit + 1} levels deep, over the limit of ${limit} .* raise maxDepth`),
    );
    // A payload of nothing but openings is refused just the same: the decoder never holds them.
    expect(refusal(codec, bytes(limit * 4).subarray(0, limit * 2)).message).toMatch(/maxDepth/);
  });

  test(`at ${limit} levels decodes; the limit is the codec's to set`, () => {
    let value = codec.decode(bytes(limit));
    for (let level = 1; level < limit; level++) value = (value as unknown[])[0];
    expect(value).toEqual([]);
    expect(refusal(make({ maxDepth: 3 }), bytes(4)).message).toMatch(/over the limit of 3/);
    expect(() => make({ maxDepth: 0 })).toThrow(/maxDepth 0 is not a whole number/);
  });
});

describe("counts no payload holds", () => {
  test("MessagePack: nested heads declaring 56,540 items each are refused before decoding (10 KB once held 1.4 GB)", () => {
    const heads = new Uint8Array(10_000).fill(0xdc);
    expect(refusal(msgpack, heads).message).toMatch(
      /declare \d+ items by here, more than its 10000 bytes can hold/,
    );
  });

  test("CBOR: the same, counted across every array and map", () => {
    // Arrays of 100 items, each the first item of the one before: 2 bytes a level.
    const heads = new Uint8Array(3000);
    for (let at = 0; at < heads.length; at += 2) heads.set([0x98, 100], at);
    expect(refusal(cbor, heads).message).toMatch(/more than its 3000 bytes can hold/);
  });
});

describe("CBOR tags", () => {
  test("the ones cbor-x gives a meaning of its own are refused: records, packed values, shared references", () => {
    for (const [what, bytes] of [
      ["a record definition", [0xd9, 0xdf, 0xff, 0x83, 0x19, 0xe0, 0x00, 0x81, 0x61, 0x61, 0x01]],
      ["a record", [0xd9, 0xe0, 0x00, 0x81, 0x02]],
      ["a packed table", [0xd8, 51, 0x84, 0x80, 0xf6, 0xf6, 0x01]],
      ["a shared value", [0xd8, 28, 0x80]],
      ["a shared reference", [0xd8, 29, 0x05]],
    ] as const) {
      expect(refusal(cbor, new Uint8Array(bytes)).message, what).toMatch(
        /has a meaning only cbor-x's own extensions give it/,
      );
    }
  });

  test("standard and unknown tags decode as cbor-x decodes them", () => {
    const date = new Date(1_700_000_000_000);
    expect(cbor.decode(cborEncode(date))).toEqual(date);
    expect(cbor.decode(cborEncode(new Set([1, 2])))).toEqual(new Set([1, 2]));
    expect(cbor.decode(new Uint8Array([0xd8, 37, 0x41, 0x01]))).toMatchObject({
      tag: 37,
      value: new Uint8Array([1]),
    });
  });
});

describe("a map key __proto__", () => {
  test("is refused by CBOR (cbor-x would hand it over renamed __proto_) and by MessagePack", () => {
    // An own property named __proto__, as JSON.parse makes one.
    const value = JSON.parse('{"__proto__":1,"other":2}');
    expect(refusal(cbor, cborEncode(value)).message).toMatch(
      /a map key __proto__, which the decoder would rename/,
    );
    expect(refusal(msgpack, msgpack.encode(value)).message).toMatch(/__proto__ is not allowed/);
    // JSON keeps it as the object's own property.
    expect(Object.keys(json.decode(new TextEncoder().encode('{"__proto__":1}')) as object)).toEqual(
      ["__proto__"],
    );
  });
});

describe("every decode failure", () => {
  test.each([
    ["json: not UTF-8", json, [0xff]],
    ["json: not JSON", json, [0x7b]],
    ["msgpack: cut short", msgpack, [0x92, 0x01]],
    ["msgpack: a key no object holds", msgpack, [0x81, 0x90, 0x01]],
    ["msgpack: bytes after the value", msgpack, [0x01, 0x02]],
    ["cbor: cut short", cbor, [0x82, 0x01]],
    ["cbor: bytes after the value", cbor, [0x01, 0x02]],
    ["cbor: a reserved head", cbor, [0x1c]],
    ["cbor: an indefinite string", cbor, [0x5f, 0x41, 0x01, 0xff]],
  ] as const)("%s: core's error, the library's as its cause", (_, codec, bytes) => {
    const error = refusal(codec, new Uint8Array(bytes));
    expect(error.message).toMatch(/^the payload is not (JSON|MessagePack|CBOR)/);
  });
});

describe("a poison message in a running service", () => {
  test("is dead-lettered and logged at error with its position; the subscription goes on", async () => {
    const handled: unknown[] = [];
    const entries: LogEntry[] = [];
    const app = new RustStream({ name: "poison", version: "0" });
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber("in", { codec: cbor })
        .deadLetter("in-dlq")
        .handle((message) => {
          handled.push(message);
        });
    });
    const h = await startInProcess(app, {
      logger: lineLogger(
        (entry) => {
          entries.push(entry);
          return "";
        },
        { level: "debug", write: () => {} },
      ),
    });
    await h.publishRaw("in", cborBignum(64 * 1024));
    await h.publishRaw("in", cborEncode({ id: 2 }));
    expect(handled).toEqual([{ id: 2 }]);
    const dead = h.published("in-dlq");
    expect(dead).toHaveLength(1);
    expect(readDeadLetterOrigin(dead[0]!.headers)?.reason).toBe("decode");
    const [failure] = h.events.filter((e) => e.type === "decode-failure");
    expect(isRustStreamError(failure?.type === "decode-failure" && failure.error)).toBe(true);
    const logged = entries.filter((e) => e.message === "message failed to decode");
    expect(logged.map((e) => [e.level, e.fields.position])).toEqual([
      ["error", String(failure?.type === "decode-failure" && failure.delivery.position)],
    ]);
    await h.running.stop();
  });
});

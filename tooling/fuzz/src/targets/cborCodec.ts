import { cbor } from "@ruststream/core/cbor";
import fc from "fast-check";
import { codecTarget, dates, depths, encodings, nestedBytes, protoKeyRefusal } from "./codecs.js";

const values = fc.oneof(
  fc.jsonValue(),
  fc.uint8Array({ maxLength: 64 }),
  fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }),
  dates,
  fc.array(fc.oneof(fc.double(), fc.integer(), fc.string())).map((a) => new Set(a)),
);

/** A tag's head (major type 6) with a 32-bit number, then a small value. */
function tagged(tag: number, content: number[]): Uint8Array {
  return new Uint8Array([
    0xda,
    tag >>> 24,
    (tag >>> 16) & 0xff,
    (tag >>> 8) & 0xff,
    tag & 0xff,
    ...content,
  ]);
}

/** A bignum (tag 2) whose byte string holds `size` bytes. */
export function bignum(size: number): Uint8Array {
  const bytes = new Uint8Array(6 + size).fill(0xab);
  bytes.set([0xc2, 0x5a, size >>> 24, (size >>> 16) & 0xff, (size >>> 8) & 0xff, size & 0xff]);
  return bytes;
}

export const cborCodec = codecTarget({
  name: "cbor-codec",
  decoder: "the CBOR codec, cbor.decode (@ruststream/core/cbor over cbor-x)",
  codec: cbor,
  seeds: fc.oneof(
    { weight: 6, arbitrary: encodings(values, cbor) },
    {
      weight: 1,
      // An array of one, a tag (21, which cbor-x leaves a Tag): nested `depth` deep.
      arbitrary: fc
        .tuple(depths, fc.constantFrom(0x81, 0xd5))
        .map(([depth, head]) => nestedBytes(head, depth, [0x80])),
    },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 4096 }).map(bignum) },
    {
      weight: 1,
      // Tags, those cbor-x gives a meaning of its own among them, on an array [1, []].
      arbitrary: fc
        .oneof(
          fc.nat({ max: 300 }),
          fc.constantFrom(6, 14, 15, 27, 28, 29, 51, 105, 258, 259, 0xdfff, 0xe000, 0x53687264),
        )
        .map((tag) => tagged(tag, [0x82, 0x01, 0x80])),
    },
  ),
  refusesValid: protoKeyRefusal,
  corpus: () => [
    { name: "a bignum of 256 KiB", input: bignum(256 * 1024) },
    { name: "2 MB of array heads", input: nestedBytes(0x81, 2_000_000, [0x80]) },
  ],
});

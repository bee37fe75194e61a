// The CBOR codec, a subpath of its own (`@ruststream/core/cbor`) so that only services that use it
// install cbor-x, an optional peer dependency of core.
import { decode, encode } from "cbor-x";
import { type CborLimits, checkCbor, DEFAULT_CBOR_LIMITS } from "./cborGuard.js";
import type { Codec } from "./codec.js";
import { checkedLimit, notDecodable } from "./decodeRefusal.js";

export type { CborLimits } from "./cborGuard.js";

/**
 * CBOR (RFC 8949), through cbor-x, with `limits` on what a payload may hold. A payload is checked
 * before it is decoded (linear in its size, reading only the heads): one that nests deeper than
 * `maxDepth`, holds a bignum over `maxBignumBytes`, or uses a tag cbor-x gives a meaning of its own
 * (records, packed values, shared references) is refused, since the decoder
 * would spend unbounded time on it or keep state from it. Every decode failure is a
 * `RustStreamError` (`invalid-argument`), which the runtime settles by the decode policy.
 */
export function cborCodec(limits: CborLimits = {}): Codec<unknown> {
  const checked: Required<CborLimits> = {
    maxDepth: checkedLimit(
      "cborCodec",
      "maxDepth",
      limits.maxDepth ?? DEFAULT_CBOR_LIMITS.maxDepth,
    ),
    maxBignumBytes: checkedLimit(
      "cborCodec",
      "maxBignumBytes",
      limits.maxBignumBytes ?? DEFAULT_CBOR_LIMITS.maxBignumBytes,
    ),
  };
  return {
    contentType: "application/cbor",
    encode(value: unknown): Uint8Array {
      return encode(value);
    },
    decode(payload: Uint8Array): unknown {
      checkCbor(payload, checked);
      try {
        return decode(payload);
      } catch (error) {
        throw notDecodable("CBOR this codec decodes", (error as Error).message, undefined, error);
      }
    },
  };
}

/** CBOR with the default limits: nesting up to 512 levels, bignums up to 128 bytes. */
export const cbor: Codec<unknown> = cborCodec();

// The MessagePack codec, a subpath of its own (`@ruststream/core/msgpack`) so that only services that
// use it install @msgpack/msgpack, an optional peer dependency of core.
import { Decoder, encode } from "@msgpack/msgpack";
import type { Codec } from "./codec.js";
import { checkedLimit, notDecodable } from "./decodeRefusal.js";
import { checkMsgpack } from "./msgpackGuard.js";

/** What a MessagePack payload may hold before it is decoded. */
export interface MsgpackLimits {
  /**
   * Arrays and maps nested deeper are refused before decoding (default 10,000). The decoder holds
   * each open level in memory: without a limit, a payload of nothing but array heads is the
   * costliest message of its size (a 2 MB one took 470 MB and seconds).
   */
  readonly maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 10_000;

/**
 * MessagePack, through @msgpack/msgpack. Before a payload is decoded its heads are walked: one
 * nesting deeper than `limits.maxDepth`, or whose arrays and maps declare more items than it has
 * bytes, is refused. Every decode failure is a `RustStreamError` (`invalid-argument`), which the
 * runtime settles by the decode policy. A string's declared length is never trusted past the
 * payload's own bytes (the library checks them before reading), so the payload's size bounds it.
 */
export function msgpackCodec(limits: MsgpackLimits = {}): Codec<unknown> {
  const maxDepth = checkedLimit("msgpackCodec", "maxDepth", limits.maxDepth ?? DEFAULT_MAX_DEPTH);
  const decoder = new Decoder();
  return {
    contentType: "application/msgpack",
    encode(value: unknown): Uint8Array {
      return encode(value);
    },
    decode(payload: Uint8Array): unknown {
      checkMsgpack(payload, maxDepth);
      try {
        return decoder.decode(payload);
      } catch (error) {
        throw notDecodable("MessagePack", (error as Error).message, undefined, error);
      }
    },
  };
}

/** MessagePack with the default limits (nesting up to 10,000 levels). */
export const msgpack: Codec<unknown> = msgpackCodec();

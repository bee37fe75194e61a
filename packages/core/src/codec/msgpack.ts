// The MessagePack codec, a subpath of its own (`@ruststream/core/msgpack`) so that only services that
// use it install @msgpack/msgpack, an optional peer dependency of core.
import { decode, encode } from "@msgpack/msgpack";
import type { Codec } from "./codec.js";

/** MessagePack, through @msgpack/msgpack. */
export const msgpack: Codec<unknown> = {
  contentType: "application/msgpack",
  encode(value: unknown): Uint8Array {
    return encode(value);
  },
  decode(payload: Uint8Array): unknown {
    return decode(payload);
  },
};

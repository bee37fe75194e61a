// The CBOR codec, a subpath of its own (`@ruststream/core/cbor`) so that only services that use it
// install cbor-x, an optional peer dependency of core.
import { decode, encode } from "cbor-x";
import type { Codec } from "./codec.js";

/** CBOR (RFC 8949), through cbor-x. */
export const cbor: Codec<unknown> = {
  contentType: "application/cbor",
  encode(value: unknown): Uint8Array {
    return encode(value);
  },
  decode(payload: Uint8Array): unknown {
    return decode(payload);
  },
};

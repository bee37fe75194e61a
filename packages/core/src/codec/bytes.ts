import { RustStreamError } from "../errors.js";
import type { Codec } from "./codec.js";

/**
 * No codec at all: the payload is the message. For handlers that read bytes themselves, and for
 * republishing what arrived without touching it.
 */
export const bytes: Codec<Uint8Array> = {
  contentType: "application/octet-stream",
  encode(value: Uint8Array): Uint8Array {
    if (!(value instanceof Uint8Array)) {
      throw new RustStreamError(
        "invalid-argument",
        "the bytes codec encodes only a Uint8Array: use json (the default) for other values",
      );
    }
    return value;
  },
  decode(payload: Uint8Array): Uint8Array {
    return payload;
  },
};

import { RustStreamError } from "../errors.js";
import { utf8Bytes } from "../utf8.js";
import type { Codec } from "./codec.js";

// Fatal: bytes that are not UTF-8 are a decode failure, not a string of replacement characters that
// happens to parse.
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * JSON over UTF-8, the default codec. `undefined`, functions and symbols have no JSON form, and a
 * `bigint` or a cycle makes `JSON.stringify` throw: all of them fail `encode` instead of sending
 * something the receiver cannot read back.
 */
export const json: Codec<unknown> = {
  contentType: "application/json",
  encode(value: unknown): Uint8Array {
    const text = JSON.stringify(value);
    if (text === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `JSON cannot encode a value of type ${typeof value}: return an object, array, string, number, boolean or null`,
      );
    }
    return utf8Bytes(text);
  },
  decode(payload: Uint8Array): unknown {
    return JSON.parse(decoder.decode(payload));
  },
};

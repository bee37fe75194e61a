import { RustStreamError } from "../errors.js";
import { utf8Bytes } from "../utf8.js";
import type { Codec } from "./codec.js";
import { checkedLimit, notDecodable, overLimit } from "./decodeRefusal.js";
import { tooDeepAt } from "./jsonDepth.js";

// Fatal: bytes that are not UTF-8 are a decode failure, not a string of replacement characters that
// happens to parse.
const decoder = new TextDecoder("utf-8", { fatal: true });

/** What a JSON payload may hold before it is parsed. */
export interface JsonLimits {
  /**
   * Arrays and objects nested deeper are refused before parsing (default 10,000). The parser holds
   * each open level in memory: without a limit, a payload of nothing but `[` is the costliest
   * message of its size (a 2 MB one took 140 MB and seconds). Payloads shorter than the limit
   * cannot reach it and are not scanned.
   */
  readonly maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 10_000;

/**
 * JSON over UTF-8. `undefined`, functions and symbols have no JSON form, and a `bigint` or a cycle
 * makes `JSON.stringify` throw: all of them fail `encode` instead of sending something the receiver
 * cannot read back. A payload nesting deeper than `limits.maxDepth` is refused before it is parsed;
 * every decode failure is a `RustStreamError` (`invalid-argument`), which the runtime settles by
 * the decode policy.
 */
export function jsonCodec(limits: JsonLimits = {}): Codec<unknown> {
  const maxDepth = checkedLimit("jsonCodec", "maxDepth", limits.maxDepth ?? DEFAULT_MAX_DEPTH);
  return {
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
      const deep = tooDeepAt(payload, maxDepth);
      if (deep >= 0) {
        throw overLimit(
          "JSON",
          "jsonCodec",
          `nesting ${maxDepth + 1} levels deep`,
          "maxDepth",
          maxDepth,
          deep,
        );
      }
      let text: string;
      try {
        text = decoder.decode(payload);
      } catch (error) {
        throw notDecodable("JSON", "it is not UTF-8", undefined, error);
      }
      try {
        return JSON.parse(text);
      } catch (error) {
        throw notDecodable("JSON", (error as Error).message, undefined, error);
      }
    },
  };
}

/** JSON with the default limits (nesting up to 10,000 levels): the default codec. */
export const json: Codec<unknown> = jsonCodec();

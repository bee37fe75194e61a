import { HeaderMap, isRustStreamError } from "@ruststream/core";
import fc from "fast-check";
// The Redis package's frame codec is internal (no entry point exports it): its source is fuzzed as
// the list and pub/sub subscriptions run it.
import {
  decodeFrame,
  encodeFrame,
  type Framed,
} from "../../../../packages/redis/src/client/frame.js";
import { hex, type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import { HEADER_MAP_BYTES_PER_BYTE, headerMaps, manyNames, payloads } from "./headers.js";

// RustStream's frame for a single blob (a list value, a pub/sub message, a delayed entry): a header
// count, length-prefixed names and values, the payload. Tolerant, as RustStream reads it: what is
// not a frame is a raw payload, whole.

const frames = fc
  .tuple(payloads, headerMaps)
  .map(([payload, headers]) => new Uint8Array(encodeFrame(headers, payload)));

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

export const redisFrame = fuzzTarget<Mutated>({
  name: "redis-frame",
  decoder: "decodeFrame, list values and pub/sub messages (@ruststream/redis)",
  inputs: mutated(frames),
  corpus: () => [
    {
      name: "a frame of 100,000 headers",
      input: (() => {
        const bytes = new Uint8Array(
          encodeFrame(new HeaderMap(manyNames(100_000)), new Uint8Array(1)),
        );
        return { seed: bytes, bytes, firstChange: bytes.length };
      })(),
    },
  ],
  size: (input) => input.bytes.length,
  decode: (input) => decodeFrame(input.bytes),
  ownError: (error) => isRustStreamError(error),
  byLimit: () => false,
  check(input, { value }) {
    const { headers, payload } = value as Framed;
    if (input.firstChange === input.bytes.length && input.bytes.length === input.seed.length) {
      return sameBytes(encodeFrame(headers, payload), input.bytes)
        ? undefined
        : "a valid frame did not read back as what was written";
    }
    const raw = headers.size === 0 && sameBytes(payload, input.bytes);
    // Read as a frame, the payload is what follows its headers: the bytes' tail, never made up.
    const tail = sameBytes(payload, input.bytes.subarray(input.bytes.length - payload.length));
    return raw || tail ? undefined : "the payload is neither the whole bytes nor their tail";
  },
  memoryBound: (input) => HEADER_MAP_BYTES_PER_BYTE * input.bytes.length,
  describe: (input) => `first change at ${input.firstChange}: ${hex(input.bytes)}`,
});

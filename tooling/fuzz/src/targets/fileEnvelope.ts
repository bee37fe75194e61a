import { HeaderMap, isRustStreamError } from "@ruststream/core";
import { decodeEnvelope, encodeEnvelope, type Unwrapped } from "@ruststream/file/format";
import fc from "fast-check";
import { hex, type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import { HEADER_MAP_BYTES_PER_BYTE, headerMaps, manyNames, payloads } from "./headers.js";

// The stream file's header envelope (`rs1:`/`rs2:` + base64): tolerant, as RustStream reads it. It
// never throws; bytes that are not an envelope come back whole, as the payload.

const envelopes = fc
  .tuple(payloads, headerMaps)
  .map(([payload, headers]) => encodeEnvelope(payload, headers));

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

export const fileEnvelope = fuzzTarget<Mutated>({
  name: "file-envelope",
  decoder: "decodeEnvelope, the rs1:/rs2: header envelope (@ruststream/file)",
  inputs: mutated(envelopes),
  corpus: () => [
    {
      name: "an rs2 envelope of 100,000 headers",
      input: (() => {
        const wire = encodeEnvelope(new Uint8Array(1), new HeaderMap(manyNames(100_000)));
        return { seed: wire, bytes: wire, firstChange: wire.length };
      })(),
    },
  ],
  size: (input) => input.bytes.length,
  decode: (input) => decodeEnvelope(input.bytes),
  ownError: (error) => isRustStreamError(error),
  byLimit: () => false,
  check(input, { value }) {
    const { payload, headers } = value as Unwrapped;
    if (input.firstChange === input.bytes.length && input.bytes.length === input.seed.length) {
      // Unchanged: reading it and writing it again gives the same bytes.
      return sameBytes(encodeEnvelope(payload, headers), input.bytes)
        ? undefined
        : "a valid envelope did not read back as what was written";
    }
    // Bytes that do not start like an envelope are the payload, whole.
    const prefix = Buffer.from(input.bytes.subarray(0, 4)).toString("latin1");
    if (
      prefix !== "rs1:" &&
      prefix !== "rs2:" &&
      (headers.size > 0 || !sameBytes(payload, input.bytes))
    ) {
      return "bytes that are no envelope did not come back whole as the payload";
    }
    return undefined;
  },
  memoryBound: (input) => HEADER_MAP_BYTES_PER_BYTE * input.bytes.length,
  describe: (input) => `first change at ${input.firstChange}: ${hex(input.bytes)}`,
});

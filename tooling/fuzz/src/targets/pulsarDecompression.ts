import fc from "fast-check";
import { CompressionType } from "../../../../packages/pulsar/src/wire/commands/enums.js";
import { decompress } from "../../../../packages/pulsar/src/wire/compression.js";
import { type Mutated, mutated } from "../mutate.js";
import { type FuzzTarget, fuzzTarget } from "../target.js";
import {
  compressedPayloads,
  describeInput,
  FUZZ_MAX_MESSAGE_SIZE,
  ownError,
  refusedByLimit,
  untouched,
  valid,
  withU32,
} from "./pulsarSeeds.js";

// What the Pulsar decompression targets share: one codec's decompression as an entry's metadata
// declares it. The input is the declared size (a big-endian u32) in front of the compressed bytes,
// so mutations lie about the size as often as about the data; decoded, the output is exactly the
// declared size, and never larger than the limit.

const declaredOf = (input: Mutated): number =>
  input.bytes.length < 4
    ? 0
    : Buffer.from(input.bytes.buffer, input.bytes.byteOffset, 4).readUInt32BE(0);

export const MiB = 1024 * 1024;

/** A corpus input: `payload` declared as `declared` bytes. */
export const declaring = (declared: number, payload: Uint8Array): Mutated => {
  const bytes = Uint8Array.from(withU32(declared, payload));
  return { seed: bytes, bytes, firstChange: bytes.length };
};

export function decompressionTarget(
  codec: "LZ4" | "ZLIB" | "ZSTD" | "SNAPPY",
  bombs: () => { name: string; input: Mutated }[],
): FuzzTarget {
  const type = CompressionType[codec];
  return fuzzTarget<Mutated>({
    name: `pulsar-decompress-${codec.toLowerCase()}`,
    decoder: `decompress(${codec}) within the max message size (@ruststream/pulsar/wire)`,
    inputs: mutated(
      fc.constantFrom(
        ...valid(compressedPayloads(type).map(({ data, size }) => withU32(size, data))),
      ),
    ),
    corpus: bombs,
    size: (input) => input.bytes.length,
    decode: (input) =>
      decompress(type, input.bytes.subarray(4), declaredOf(input), FUZZ_MAX_MESSAGE_SIZE),
    ownError,
    byLimit: refusedByLimit,
    check(input, { threw, value }) {
      if (threw)
        return untouched(input)
          ? `a valid payload was refused: ${(value as Error).message}`
          : undefined;
      const out = value as Uint8Array;
      return out.length === declaredOf(input) && out.length <= FUZZ_MAX_MESSAGE_SIZE
        ? undefined
        : `${out.length} bytes out for ${declaredOf(input)} declared`;
    },
    // The output, and the codec's working copy of it (zlib's chunks, ZSTD's heap copy).
    memoryBound: (input) => 2 * input.bytes.length + 3 * FUZZ_MAX_MESSAGE_SIZE,
    describe: describeInput,
  });
}

// pulsar-decompress-<codec>: one codec's decompression as an entry's metadata declares it. The input
// is the declared size (a big-endian u32) in front of the compressed bytes, so mutations lie about
// the size as often as about the data; decoded, the output is exactly the declared size, and never
// larger than the limit.
import { CompressionType } from "../../src/wire/commands/enums.js";
import { decompress } from "../../src/wire/compression.js";
import { lz4OfZeros, zlibOfZeros, zstdOfRuns } from "../bombs.js";
import {
  describeInput,
  FUZZ_MAX_MESSAGE_SIZE,
  type FuzzInput,
  ownError,
  type PulsarFuzzTarget,
  refusedByLimit,
  unchanged,
  untouched,
  valid,
  withU32,
} from "./pulsarTarget.js";
import { compressedPayloads } from "./seeds.js";

const declaredOf = (input: FuzzInput): number =>
  input.bytes.length < 4
    ? 0
    : Buffer.from(input.bytes.buffer, input.bytes.byteOffset, 4).readUInt32BE(0);

type Codec = "LZ4" | "ZLIB" | "ZSTD" | "SNAPPY";

const MiB = 1024 * 1024;

/** Bombs by codec: each once produced, or allocated, far more than its declared size. */
const bombs: Record<Codec, () => { name: string; input: FuzzInput }[]> = {
  LZ4: () => [
    {
      name: "1 MiB holding 256 MiB, declared so",
      input: unchanged(withU32(256 * MiB, lz4OfZeros(256 * MiB))),
    },
    {
      name: "2 bytes declaring 1 GiB (allocated before)",
      input: unchanged(withU32(1024 * MiB, Uint8Array.of(0, 0))),
    },
    {
      name: "2 bytes declaring the limit",
      input: unchanged(withU32(FUZZ_MAX_MESSAGE_SIZE, Uint8Array.of(0, 0))),
    },
  ],
  ZLIB: () => [
    {
      name: "256 MiB of zeros in 261 KB, declared 10 bytes (inflated whole before)",
      input: unchanged(withU32(10, zlibOfZeros(256 * MiB))),
    },
  ],
  ZSTD: () => [
    {
      name: "12 bytes declaring 1.1 GiB (+1.1 GiB of heap for good before)",
      input: unchanged(withU32(10, zstdOfRuns(1, 1_181_116_006).subarray(0, 12))),
    },
    {
      name: "8 KiB of runs declaring 256 MiB",
      input: unchanged(withU32(10, zstdOfRuns(2048, 256 * MiB))),
    },
    {
      name: "8 KiB of runs declaring no size, declared the limit",
      input: unchanged(withU32(FUZZ_MAX_MESSAGE_SIZE, zstdOfRuns(2048, undefined))),
    },
  ],
  SNAPPY: () => [
    {
      name: "7 bytes declaring 4 GiB",
      input: unchanged(withU32(10, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0x61))),
    },
  ],
};

function decompressionTarget(codec: Codec): PulsarFuzzTarget {
  const type = CompressionType[codec];
  return {
    name: `pulsar-decompress-${codec.toLowerCase()}`,
    decoder: `decompress(${codec}) within the max message size (@ruststream/pulsar/wire)`,
    seeds: () => valid(compressedPayloads(type).map(({ data, size }) => withU32(size, data))),
    corpus: bombs[codec],
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
  };
}

export const pulsarDecompressLz4 = decompressionTarget("LZ4");
export const pulsarDecompressZlib = decompressionTarget("ZLIB");
export const pulsarDecompressZstd = decompressionTarget("ZSTD");
export const pulsarDecompressSnappy = decompressionTarget("SNAPPY");

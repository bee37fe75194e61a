// The SNAPPY codec over snappy (a Node-API addon with prebuilt binaries), loaded on first need. A raw
// snappy block starts with its uncompressed length, a varint, and the decoder allocates that much
// before it reads on: the length is checked against what the entry's metadata declares (itself
// within the max message size) first, so a few bytes claiming 4 GiB allocate nothing.
import { DecodeError } from "./errors.js";

export interface SnappyCodec {
  compress(data: Uint8Array): Uint8Array;
  decompress(data: Uint8Array, uncompressedSize: number): Uint8Array;
}

/** The uncompressed length a raw snappy block declares: its leading varint, at most 32 bits. */
export function snappyDeclaredLength(block: Uint8Array): number {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (i >= block.length) throw new DecodeError("snappy: the block ends inside its length");
    const byte = block[i]!;
    value += (byte & 127) * 2 ** (7 * i);
    if (byte < 128) return value;
  }
  throw new DecodeError("snappy: the block's length runs past 5 bytes");
}

const asBuffer = (data: Uint8Array): Buffer =>
  Buffer.from(data.buffer, data.byteOffset, data.byteLength);

/** Loads snappy; rejects when its binary cannot load. */
export async function loadSnappy(): Promise<SnappyCodec> {
  const snappy = (await import("snappy")).default;
  return {
    compress: (data) => snappy.compressSync(asBuffer(data)),
    decompress(data, uncompressedSize) {
      const declared = snappyDeclaredLength(data);
      if (declared !== uncompressedSize)
        throw new DecodeError(
          `snappy: the block declares ${declared} bytes where the metadata declares ${uncompressedSize}`,
        );
      return snappy.uncompressSync(asBuffer(data)) as Buffer;
    },
  };
}

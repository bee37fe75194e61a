// Payloads that decompress to far more than they are, built without holding what they decompress
// to: the decompression-bomb tests and the live poison entries use them.
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { createDeflate } from "node:zlib";

const MiB = 1024 * 1024;

/** A zlib stream of `size` zero bytes, deflated as the zeros are produced (256 MiB: 261 KB). */
export function zlibOfZeros(size: number): Promise<Buffer> {
  const chunk = Buffer.alloc(MiB);
  async function* zeros() {
    for (let left = size; left > 0; left -= MiB)
      yield left >= MiB ? chunk : chunk.subarray(0, left);
  }
  return buffer(Readable.from(zeros()).pipe(createDeflate()));
}

/**
 * A zstd frame of `blocks` RLE blocks of 128 KiB zeros (4 bytes each); its header declares
 * `declares` bytes (in one segment), or no size at all (a 128 KiB window).
 */
export function zstdOfRuns(blocks: number, declares: number | undefined): Buffer {
  const header =
    declares === undefined
      ? Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38])
      : Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0, 0]);
  if (declares !== undefined) header.writeUInt32LE(declares, 5);
  const body = Buffer.alloc(blocks * 4);
  for (let i = 0; i < blocks; i++)
    body.writeUIntLE((131_072 << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0), i * 4, 3);
  return Buffer.concat([header, body]);
}

/** A raw LZ4 block of `size` zero bytes: a literal, one match at offset 1, five closing literals. */
export function lz4OfZeros(size: number): Buffer {
  const lengths: number[] = [];
  let rest = size - 6 - 4 - 15;
  for (; rest >= 255; rest -= 255) lengths.push(255);
  lengths.push(rest);
  return Buffer.from([0x1f, 0, 1, 0, ...lengths, 0x50, 0, 0, 0, 0, 0]);
}

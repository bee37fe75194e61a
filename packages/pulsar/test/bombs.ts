// Payloads that decompress to far more than they are, built without holding what they decompress
// to: the decompression-bomb tests and the live poison entries use them.
import { constants, deflateRawSync } from "node:zlib";

const MiB = 1024 * 1024;

/**
 * A zlib stream of `size` zero bytes (a multiple of 1 MiB; 256 MiB in 265 KB): the zlib header,
 * then one deflated MiB of zeros, flushed to a byte boundary and not final, repeated. It ends as
 * Pulsar's Java codec ends its streams, with a sync flush, and is built without holding the zeros.
 */
export function zlibOfZeros(size: number): Buffer {
  const block = deflateRawSync(Buffer.alloc(MiB), { finishFlush: constants.Z_SYNC_FLUSH });
  return Buffer.concat([Buffer.from([0x78, 0x9c]), ...Array<Buffer>(size / MiB).fill(block)]);
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

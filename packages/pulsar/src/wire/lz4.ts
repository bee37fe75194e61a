// LZ4 in its raw block format (no frame header, no checksum), which is what Pulsar's LZ4 codec puts
// on the wire; the receiver learns the decompressed length from MessageMetadata.uncompressed_size.
// Written from the block format's description: a sequence is a token (literal length in the high
// nibble, match length - 4 in the low one, 15 meaning "more bytes follow, 255 at a time"), the
// literals, a 2-byte little-endian offset back into the output, then the rest of the match length.
// The last sequence holds only literals; the last 5 bytes are always literals and the last match
// starts at least 12 bytes before the end.
import { DecodeError } from "./errors.js";

const MIN_MATCH = 4;
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const MAX_OFFSET = 65_535;
const HASH_BITS = 14;
/**
 * The most a block expands per byte: only the bytes extending a match's length yield more than
 * they take, 255 each, so no block of n bytes holds more than 255 n.
 */
const MAX_EXPANSION = 255;

/**
 * Decompresses one raw LZ4 block into exactly `uncompressedSize` bytes; DecodeError on malformed
 * input, and before anything is allocated when the block is too short to hold that many.
 */
export function lz4DecompressBlock(src: Uint8Array, uncompressedSize: number): Uint8Array {
  if (uncompressedSize > src.length * MAX_EXPANSION)
    throw new DecodeError(
      `lz4: a block of ${src.length} bytes cannot hold the ${uncompressedSize} the metadata declares`,
    );
  const dst = new Uint8Array(uncompressedSize);
  let s = 0;
  let d = 0;
  while (s < src.length) {
    const token = src[s++]!;
    let literals = token >>> 4;
    if (literals === 15) {
      let b: number;
      do {
        if (s >= src.length) throw new DecodeError("lz4: literal length runs past the input");
        b = src[s++]!;
        literals += b;
      } while (b === 255);
    }
    if (s + literals > src.length || d + literals > dst.length)
      throw new DecodeError("lz4: literals run past the input or the declared size");
    dst.set(src.subarray(s, s + literals), d);
    s += literals;
    d += literals;
    if (s >= src.length) break; // the last sequence: literals only
    if (s + 2 > src.length) throw new DecodeError("lz4: truncated match offset");
    const offset = src[s]! | (src[s + 1]! << 8);
    s += 2;
    if (offset === 0 || offset > d)
      throw new DecodeError(`lz4: match offset ${offset} out of range`);
    let length = token & 15;
    if (length === 15) {
      let b: number;
      do {
        if (s >= src.length) throw new DecodeError("lz4: match length runs past the input");
        b = src[s++]!;
        length += b;
      } while (b === 255);
    }
    length += MIN_MATCH;
    if (d + length > dst.length) throw new DecodeError("lz4: match runs past the declared size");
    let from = d - offset;
    if (offset >= length) {
      dst.copyWithin(d, from, from + length);
      d += length;
    } else {
      // Overlapping copy (a run): byte by byte repeats the pattern, as the format intends.
      for (let i = 0; i < length; i++) dst[d++] = dst[from++]!;
    }
  }
  if (d !== uncompressedSize)
    throw new DecodeError(
      `lz4: decompressed ${d} bytes, the metadata declared ${uncompressedSize}`,
    );
  return dst;
}

function read32(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
}

function writeLength(out: Uint8Array, at: number, rest: number): number {
  let o = at;
  let n = rest;
  while (n >= 255) {
    out[o++] = 255;
    n -= 255;
  }
  out[o++] = n;
  return o;
}

/** Compresses `src` into one raw LZ4 block (greedy matching over a hash of 4-byte sequences). */
export function lz4CompressBlock(src: Uint8Array): Uint8Array {
  const n = src.length;
  const out = new Uint8Array(n + Math.ceil(n / 255) + 16);
  let o = 0;
  let anchor = 0;
  if (n > MF_LIMIT) {
    const table = new Int32Array(1 << HASH_BITS).fill(-1);
    const matchLimit = n - LAST_LITERALS;
    const lastMatchStart = n - MF_LIMIT;
    let i = 0;
    let misses = 0;
    while (i < lastMatchStart) {
      const sequence = read32(src, i);
      const h = Math.imul(sequence, 2654435761) >>> (32 - HASH_BITS);
      const ref = table[h]!;
      table[h] = i;
      if (ref < 0 || i - ref > MAX_OFFSET || read32(src, ref) !== sequence) {
        // Step faster through data that does not compress, as the reference encoder does.
        i += 1 + (misses++ >> 6);
        continue;
      }
      misses = 0;
      let length = MIN_MATCH;
      while (i + length < matchLimit && src[ref + length] === src[i + length]) length++;
      const literals = i - anchor;
      const matchCode = length - MIN_MATCH;
      out[o++] = (Math.min(literals, 15) << 4) | Math.min(matchCode, 15);
      if (literals >= 15) o = writeLength(out, o, literals - 15);
      out.set(src.subarray(anchor, i), o);
      o += literals;
      const offset = i - ref;
      out[o++] = offset & 0xff;
      out[o++] = offset >>> 8;
      if (matchCode >= 15) o = writeLength(out, o, matchCode - 15);
      i += length;
      anchor = i;
    }
  }
  const literals = n - anchor;
  out[o++] = Math.min(literals, 15) << 4;
  if (literals >= 15) o = writeLength(out, o, literals - 15);
  out.set(src.subarray(anchor), o);
  o += literals;
  return out.slice(0, o);
}

// CRC-32C (Castagnoli): the checksum Pulsar puts in every payload frame. Node 20's zlib.crc32 is
// CRC-32/IEEE, a different polynomial, so it cannot stand in. Reflected polynomial 0x82F63B78,
// initial value and final xor 0xFFFFFFFF.

const POLYNOMIAL = 0x82f63b78;

// Slicing-by-16 over one flat table (table t at t * 256): the payloads of a batch run to hundreds
// of kilobytes, and sixteen bytes per step, read as four 32-bit words, is about twice as fast in V8
// as slicing-by-8 read byte by byte (measured 0.7-1.2 against 1.8-3.6 ns a byte on 128 KiB).
const TABLE = (() => {
  const table = new Uint32Array(16 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = table[n]!;
    for (let t = 1; t < 16; t++) {
      c = table[c & 0xff]! ^ (c >>> 8);
      table[t * 256 + n] = c >>> 0;
    }
  }
  return table;
})();

// The word reads take the first byte as the low one: true on every platform Node ships for, checked
// anyway, with the byte loop alone on a big-endian one.
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * Continues a CRC-32C over `bytes`. Start with `crc32c(bytes)`; to checksum data held in several
 * buffers, pass the previous result as `previous`.
 */
export function crc32c(bytes: Uint8Array, previous = 0): number {
  const t = TABLE;
  const length = bytes.length;
  let crc = ~previous;
  let i = 0;
  if (LITTLE_ENDIAN && length >= 32) {
    // Bytes one by one up to a 4-byte boundary, so the words can be read through an Int32Array.
    while ((bytes.byteOffset + i) & 3) crc = t[(crc ^ bytes[i++]!) & 0xff]! ^ (crc >>> 8);
    const blocks = (length - i) >>> 4;
    const words = new Int32Array(bytes.buffer, bytes.byteOffset + i, blocks * 4);
    for (let w = 0; w < words.length; w += 4) {
      const a = crc ^ words[w]!;
      const b = words[w + 1]!;
      const c = words[w + 2]!;
      const d = words[w + 3]!;
      crc =
        t[3840 + (a & 0xff)]! ^
        t[3584 + ((a >>> 8) & 0xff)]! ^
        t[3328 + ((a >>> 16) & 0xff)]! ^
        t[3072 + (a >>> 24)]! ^
        t[2816 + (b & 0xff)]! ^
        t[2560 + ((b >>> 8) & 0xff)]! ^
        t[2304 + ((b >>> 16) & 0xff)]! ^
        t[2048 + (b >>> 24)]! ^
        t[1792 + (c & 0xff)]! ^
        t[1536 + ((c >>> 8) & 0xff)]! ^
        t[1280 + ((c >>> 16) & 0xff)]! ^
        t[1024 + (c >>> 24)]! ^
        t[768 + (d & 0xff)]! ^
        t[512 + ((d >>> 8) & 0xff)]! ^
        t[256 + ((d >>> 16) & 0xff)]! ^
        t[d >>> 24]!;
    }
    i += blocks * 16;
  }
  while (i < length) crc = t[(crc ^ bytes[i++]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

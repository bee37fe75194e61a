// CRC-32C (Castagnoli): the checksum Pulsar puts in every payload frame. Node 20's zlib.crc32 is
// CRC-32/IEEE, a different polynomial, so it cannot stand in. Reflected polynomial 0x82F63B78,
// initial value and final xor 0xFFFFFFFF.

const POLYNOMIAL = 0x82f63b78;

// Eight tables for slicing-by-8: the payloads of a batch run to hundreds of kilobytes, and eight
// bytes per step is several times faster than one in V8.
const TABLES: Uint32Array[] = (() => {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  const first = tables[0]!;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1;
    first[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = first[n]!;
    for (let t = 1; t < 8; t++) {
      c = first[c & 0xff]! ^ (c >>> 8);
      tables[t]![n] = c >>> 0;
    }
  }
  return tables;
})();

const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
];

/**
 * Continues a CRC-32C over `bytes`. Start with `crc32c(bytes)`; to checksum data held in several
 * buffers, pass the previous result as `previous`.
 */
export function crc32c(bytes: Uint8Array, previous = 0): number {
  let crc = ~previous >>> 0;
  let i = 0;
  const end8 = bytes.length - (bytes.length % 8);
  while (i < end8) {
    const a =
      (crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))) >>>
      0;
    crc =
      T7[a & 0xff]! ^
      T6[(a >>> 8) & 0xff]! ^
      T5[(a >>> 16) & 0xff]! ^
      T4[a >>> 24]! ^
      T3[bytes[i + 4]!]! ^
      T2[bytes[i + 5]!]! ^
      T1[bytes[i + 6]!]! ^
      T0[bytes[i + 7]!]!;
    i += 8;
  }
  while (i < bytes.length) crc = T0[(crc ^ bytes[i++]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

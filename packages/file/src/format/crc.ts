/**
 * CRC-16/CDMA2000: poly 0xC867, init 0xFFFF, no reflection, no final xor. SeaStreamer uses it for
 * each frame's payload checksum and, chained over those checksums, for the beacons' running checksum.
 */
const POLY = 0xc867;

const TABLE: Uint16Array = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ POLY) & 0xffff : (crc << 1) & 0xffff;
    }
    table[i] = crc;
  }
  return table;
})();

export const CRC16_INIT = 0xffff;

/** Continues a CRC over `bytes[start, end)` from state `crc`. */
export function crc16Update(crc: number, bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = crc;
  for (let i = start; i < end; i++) {
    c = (TABLE[((c >>> 8) ^ bytes[i]!) & 0xff]! ^ (c << 8)) & 0xffff;
  }
  return c;
}

export function crc16Cdma2000(bytes: Uint8Array): number {
  return crc16Update(CRC16_INIT, bytes);
}

/** The running checksum folds in each payload checksum as its two big-endian bytes. */
export function runningChecksumUpdate(running: number, checksum: number): number {
  let c = running;
  c = (TABLE[((c >>> 8) ^ (checksum >>> 8)) & 0xff]! ^ (c << 8)) & 0xffff;
  c = (TABLE[((c >>> 8) ^ (checksum & 0xff)) & 0xff]! ^ (c << 8)) & 0xffff;
  return c;
}

/**
 * CRC-16/CDMA2000: poly 0xC867, init 0xFFFF, no reflection, no final xor. SeaStreamer uses it for
 * each frame's payload checksum and, chained over those checksums, for the beacons' running checksum.
 */
const POLY = 0xc867;

/** `step` runs the CRC over one zero byte: tables for bytes further back are built from it. */
function step(table: Uint16Array, crc: number): number {
  return (table[crc >>> 8]! ^ (crc << 8)) & 0xffff;
}

/**
 * `TABLES[k][v]`: the CRC contribution of byte `v` followed by `k` more bytes. Four tables let the
 * loop fold four payload bytes per step (the CRC is linear), a payload's checksum being the replay
 * hot path.
 */
const TABLES: readonly Uint16Array[] = (() => {
  const t0 = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ POLY) & 0xffff : (crc << 1) & 0xffff;
    }
    t0[i] = crc;
  }
  const tables = [t0];
  for (let k = 1; k < 4; k++) {
    const previous = tables[k - 1]!;
    const next = new Uint16Array(256);
    for (let i = 0; i < 256; i++) next[i] = step(t0, previous[i]!);
    tables.push(next);
  }
  return tables;
})();
const TABLE = TABLES[0]!;
const [, T1, T2, T3] = TABLES as [Uint16Array, Uint16Array, Uint16Array, Uint16Array];

export const CRC16_INIT = 0xffff;

/** Continues a CRC over `bytes[start, end)` from state `crc`. */
export function crc16Update(crc: number, bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = crc;
  let i = start;
  for (const last = end - 4; i <= last; i += 4) {
    c =
      T3[(c >>> 8) ^ bytes[i]!]! ^
      T2[(c & 0xff) ^ bytes[i + 1]!]! ^
      T1[bytes[i + 2]!]! ^
      TABLE[bytes[i + 3]!]!;
  }
  for (; i < end; i++) c = (TABLE[((c >>> 8) ^ bytes[i]!) & 0xff]! ^ (c << 8)) & 0xffff;
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

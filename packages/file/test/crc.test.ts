import { describe, expect, it } from "vitest";
import { crc16Cdma2000, crc16Update, runningChecksumUpdate } from "../src/formatEntry.js";

const ascii = (s: string) => new TextEncoder().encode(s);

describe("crc16Cdma2000", () => {
  it("matches the upstream test vectors", () => {
    expect(crc16Cdma2000(ascii("123456789"))).toBe(0x4c06);
    expect(crc16Cdma2000(ascii("hello, world"))).toBe(0x8028);
    expect(crc16Cdma2000(ascii("123456789abcd"))).toBe(0xa106);
  });

  it("is 0xFFFF for no bytes and can be continued in pieces", () => {
    expect(crc16Cdma2000(new Uint8Array(0))).toBe(0xffff);
    const all = ascii("123456789abcd");
    expect(crc16Update(crc16Update(0xffff, all, 0, 5), all, 5)).toBe(0xa106);
  });

  it("agrees with the bit-by-bit definition at every length and offset", () => {
    // The definition itself: poly 0xC867, init 0xFFFF, MSB first, one bit at a time.
    const reference = (bytes: Uint8Array, start: number, end: number) => {
      let crc = 0xffff;
      for (let i = start; i < end; i++) {
        crc ^= bytes[i]! << 8;
        for (let bit = 0; bit < 8; bit++) {
          crc = crc & 0x8000 ? ((crc << 1) ^ 0xc867) & 0xffff : (crc << 1) & 0xffff;
        }
      }
      return crc;
    };
    let seed = 7;
    const bytes = Uint8Array.from({ length: 600 }, () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed >>> 24;
    });
    for (let start = 0; start < 9; start++) {
      for (let end = start; end <= bytes.length; end += start + 1) {
        expect(crc16Update(0xffff, bytes, start, end)).toBe(reference(bytes, start, end));
      }
    }
  });

  it("folds a checksum into the running checksum as two big-endian bytes", () => {
    expect(runningChecksumUpdate(0xffff, 0x4c06)).toBe(crc16Cdma2000(new Uint8Array([0x4c, 0x06])));
  });
});

import { describe, expect, it } from "vitest";
import { crc16Cdma2000, crc16Update, runningChecksumUpdate } from "../src/index.js";

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

  it("folds a checksum into the running checksum as two big-endian bytes", () => {
    expect(runningChecksumUpdate(0xffff, 0x4c06)).toBe(crc16Cdma2000(new Uint8Array([0x4c, 0x06])));
  });
});

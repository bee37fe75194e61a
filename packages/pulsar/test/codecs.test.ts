// The byte-level pieces, checked against published vectors and by round trips.

import { bytes } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { CompressionType } from "../src/wire/commands/enums.js";
import { compress, decompress, loadCodecs } from "../src/wire/compression.js";
import { crc32c } from "../src/wire/crc32c.js";
import { DecodeError } from "../src/wire/errors.js";
import { DEFAULT_MAX_MESSAGE_SIZE } from "../src/wire/frame.js";
import { lz4CompressBlock, lz4DecompressBlock } from "../src/wire/lz4.js";

describe("crc32c", () => {
  // The check value of CRC-32C, and the iSCSI vectors of RFC 3720 appendix B.4.
  it.each([
    ["123456789", bytes("123456789"), 0xe3069283],
    ["32 zero bytes", new Uint8Array(32), 0x8a9136aa],
    ["32 0xff bytes", new Uint8Array(32).fill(0xff), 0x62a8ab43],
    ["32 ascending bytes", Uint8Array.from({ length: 32 }, (_, i) => i), 0x46dd794e],
    ["32 descending bytes", Uint8Array.from({ length: 32 }, (_, i) => 31 - i), 0x113fdb5c],
    ["nothing", new Uint8Array(0), 0],
  ])("%s", (_name, input, expected) => {
    expect(crc32c(input)).toBe(expected);
  });

  it("continues over pieces as over the whole, for every split and length", () => {
    const data = Uint8Array.from({ length: 100 }, (_, i) => (i * 37 + 11) & 0xff);
    for (let length = 0; length <= data.length; length += 7) {
      const whole = crc32c(data.subarray(0, length));
      for (let split = 0; split <= length; split += 3)
        expect(crc32c(data.subarray(split, length), crc32c(data.subarray(0, split)))).toBe(whole);
    }
  });

  it("matches the bit-by-bit definition at every alignment and over word-sized lengths", () => {
    // The fast path reads 32-bit words from a 4-byte boundary: every start offset and the lengths
    // around its 16-byte steps, against the polynomial applied one bit at a time.
    const bitwise = (input: Uint8Array): number => {
      let crc = 0xffffffff;
      for (const byte of input) {
        crc ^= byte;
        for (let k = 0; k < 8; k++) crc = crc & 1 ? 0x82f63b78 ^ (crc >>> 1) : crc >>> 1;
      }
      return ~crc >>> 0;
    };
    const data = Uint8Array.from({ length: 4200 }, (_, i) => (i * 2654435761) >>> 13);
    for (let offset = 0; offset < 8; offset++)
      for (const length of [31, 32, 33, 47, 48, 49, 63, 64, 65, 100, 1027, 4096]) {
        const piece = data.subarray(offset, offset + length);
        expect(crc32c(piece), `offset ${offset}, length ${length}`).toBe(bitwise(piece));
      }
  });
});

describe("lz4 raw blocks", () => {
  it("decodes a hand-made block: literals, an overlapping match, trailing literals", () => {
    // token 0x31: 3 literals "abc", match length 1+4=5 at offset 3 -> "abcabcab", then token 0x50: 5 literals.
    const block = Uint8Array.from([0x31, ...bytes("abc"), 3, 0, 0x50, ...bytes("hello")]);
    expect(Buffer.from(lz4DecompressBlock(block, 13)).toString()).toBe("abcabcabhello");
  });

  it("round-trips text, runs, random and edge sizes", () => {
    const random = Uint8Array.from({ length: 70_000 }, () => Math.floor(Math.random() * 256));
    const inputs = [
      new Uint8Array(0),
      bytes("a"),
      bytes("twelve bytes"),
      bytes("thirteen byte"),
      new Uint8Array(100_000).fill(7),
      bytes("the quick brown fox jumps over the lazy dog ".repeat(500)),
      random,
      Uint8Array.from({ length: 300_000 }, (_, i) => (i % 251) ^ (i >> 12)),
    ];
    for (const input of inputs) {
      const block = lz4CompressBlock(input);
      expect(Buffer.from(lz4DecompressBlock(block, input.length)).equals(Buffer.from(input))).toBe(
        true,
      );
    }
    expect(lz4CompressBlock(new Uint8Array(100_000)).length).toBeLessThan(1000);
  });

  it("refuses a block that claims another size or points before the output", () => {
    const block = lz4CompressBlock(bytes("hello hello hello hello hello"));
    expect(() => lz4DecompressBlock(block, 10)).toThrow(/lz4/);
    expect(() => lz4DecompressBlock(Uint8Array.from([0x10, 0x61, 9, 0, 0x00]), 10)).toThrow(
      /offset/,
    );
  });
});

describe("compression codecs", () => {
  it("SNAPPY writes a raw snappy block (the 'hello' vector)", async () => {
    await loadCodecs();
    expect(Buffer.from(compress(CompressionType.SNAPPY, bytes("hello"))).toString("hex")).toBe(
      "051068656c6c6f",
    );
  });

  it("ZLIB writes a zlib stream (RFC 1950 header), as java.util.zip.Deflater does", async () => {
    const out = compress(CompressionType.ZLIB, bytes("hello hello hello"));
    expect(out[0]).toBe(0x78);
    expect(((out[0]! << 8) | out[1]!) % 31).toBe(0);
  });

  it("ZSTD writes a zstd frame (magic 28 b5 2f fd)", async () => {
    await loadCodecs();
    const out = compress(CompressionType.ZSTD, bytes("hello hello hello"));
    expect(Buffer.from(out.subarray(0, 4)).toString("hex")).toBe("28b52ffd");
  });

  it.each(["NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY"] as const)("%s round-trips", async (name) => {
    await loadCodecs();
    const input = bytes(`payload ${"abc".repeat(1000)} end`);
    const type = CompressionType[name];
    const packed = compress(type, input);
    expect(Buffer.from(decompress(type, packed, input.length)).toString()).toBe(
      Buffer.from(input).toString(),
    );
  });

  it("refuses a payload whose size differs from the declared one", async () => {
    const packed = compress(CompressionType.ZLIB, bytes("hello"));
    expect(() => decompress(CompressionType.ZLIB, packed, 6)).toThrow(
      new DecodeError("ZLIB: decompressed 5 bytes where the metadata declares 6"),
    );
    expect(() => decompress(CompressionType.ZLIB, packed, 4)).toThrow(
      new DecodeError("zlib: the stream inflates past the 4 bytes the metadata declares"),
    );
  });
});

// Bytes someone else wrote (issue 40): whatever they are, decompressing them throws the package's
// DecodeError and nothing else, and never produces more than the max message size.
describe("decompressing hostile bytes", () => {
  const codecs = ["LZ4", "ZLIB", "ZSTD", "SNAPPY"] as const;

  it("refuses a compression type this client does not know, as a DecodeError", () => {
    expect(() => decompress(7, bytes("hello"), 5)).toThrow(
      new DecodeError("compression type 7 is unknown to this client"),
    );
  });

  it.each(
    codecs,
  )("%s: refuses a declared size above the limit before decompressing", async (name) => {
    await loadCodecs();
    const type = CompressionType[name];
    const input = new Uint8Array(DEFAULT_MAX_MESSAGE_SIZE + 1);
    const packed = compress(type, input);
    expect(() => decompress(type, packed, input.length)).toThrow(
      new DecodeError(
        `an uncompressed size of ${input.length} bytes, above the max message size of ${DEFAULT_MAX_MESSAGE_SIZE}`,
      ),
    );
    // The limit is the caller's: the connection's max message size.
    expect(decompress(type, packed, input.length, input.length).length).toBe(input.length);
    expect(() => decompress(type, compress(type, bytes("hello")), 5, 4)).toThrow(/above the max/);
  });

  it.each(codecs)("%s: throws only DecodeError for damaged and random bytes", async (name) => {
    await loadCodecs();
    const type = CompressionType[name];
    const good = compress(type, bytes("hello hello hello hello hello ".repeat(20)));
    // A seeded generator: the same inputs every run.
    let seed = 0x9e3779b9 ^ type;
    const next = (): number => {
      seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
      return seed;
    };
    for (let i = 0; i < 300; i++) {
      const input = Uint8Array.from(good);
      // Flip a few bytes of a real payload, or cut it, or take random bytes.
      if (i % 3 === 0) for (let k = 0; k < 3; k++) input[next() % input.length] = next() & 0xff;
      const data =
        i % 3 === 1
          ? input.subarray(0, next() % input.length)
          : i % 3 === 2
            ? Uint8Array.from({ length: next() % 64 }, () => next() & 0xff)
            : input;
      const declared = i % 2 === 0 ? 600 : next() % 100_000;
      try {
        decompress(type, data, declared);
      } catch (error) {
        expect(error, `input ${i}`).toBeInstanceOf(DecodeError);
      }
    }
  });

  it("ZSTD and SNAPPY: refuse a payload declaring another size than the metadata, before decompressing", async () => {
    await loadCodecs();
    for (const name of ["ZSTD", "SNAPPY"] as const) {
      const type = CompressionType[name];
      const packed = compress(type, bytes("hello"));
      expect(() => decompress(type, packed, 4)).toThrow(
        /declares 5 bytes where the metadata declares 4/,
      );
    }
  });
});

// snappy is a Node-API addon whose binary comes from a per-platform optional dependency. Where it
// cannot load, the package still loads and every other codec works; SNAPPY alone answers
// `unsupported`, naming the fix. The import of snappy fails here as it does without a binary.
import { describe, expect, it, vi } from "vitest";
import { CompressionType } from "../src/wire/commands/enums.js";
import { compress, decompress, loadCodecs } from "../src/wire/compression.js";

vi.mock("snappy", () => {
  throw new Error("Cannot find native binding.");
});

describe("without snappy's binary", () => {
  it("runs NONE, LZ4, ZLIB and ZSTD, and refuses SNAPPY with the fix", async () => {
    await loadCodecs();
    const data = new TextEncoder().encode("hello hello hello hello");
    for (const type of [
      CompressionType.NONE,
      CompressionType.LZ4,
      CompressionType.ZLIB,
      CompressionType.ZSTD,
    ]) {
      expect([...decompress(type, compress(type, data), data.length)]).toEqual([...data]);
    }
    expect(() => compress(CompressionType.SNAPPY, data)).toThrow(
      expect.objectContaining({
        code: "unsupported",
        message: expect.stringMatching(/failed to load.*reinstall without --omit=optional/),
      }),
    );
  });
});

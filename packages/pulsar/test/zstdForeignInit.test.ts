// ZSTD's initialisation when something other than this package initialised @bokuweb/zstd-wasm
// first and used it (its own init() is not idempotent: zstdInit.test.ts). In a file of its own, so
// the library is not initialised when the test begins.

import { describe, expect, it, vi } from "vitest";
import { CompressionType } from "../src/wire/commands/enums.js";

// The library as it is, its init() counted: a second init swaps its instance in asynchronously, at
// no moment a test could wait for, so the test counts the calls instead.
const library = vi.hoisted(() => ({ inits: 0 }));
vi.mock("@bokuweb/zstd-wasm", async (importOriginal) => {
  const original = await importOriginal<typeof import("@bokuweb/zstd-wasm")>();
  return {
    ...original,
    init: () => {
      library.inits++;
      return original.init();
    },
  };
});

const ZSTD = CompressionType.ZSTD;
const data = new TextEncoder().encode("abcdefgh".repeat(200));

describe("ZSTD's initialisation", () => {
  it("leaves alone a library something else initialised and used", async () => {
    const zstd = await import("@bokuweb/zstd-wasm");
    await zstd.init();
    const theirs = zstd.compress(data, 3);
    const copy = await import("../src/wire/compression.js");
    await copy.loadCodecs();
    expect(library.inits, "init() calls: theirs, and none of this package's").toBe(1);
    const frame = copy.compress(ZSTD, data);
    expect([...frame.subarray(0, 4)]).toEqual([0x28, 0xb5, 0x2f, 0xfd]);
    expect(copy.decompress(ZSTD, frame, data.length)).toEqual(data);
    expect(zstd.decompress(theirs)).toEqual(data);
  });
});

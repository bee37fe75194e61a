// ZSTD's initialisation, once per process whoever asks (issue 20). @bokuweb/zstd-wasm's init() is
// not idempotent: a second call after use leaves every later frame starting with zero bytes. A
// process can hold several copies of the codec module (a CommonJS and an ES module build, or two
// entries each bundling it) over one copy of the library; vi.resetModules() makes a second copy
// here, while the library, an external dependency, stays the one node loaded.

import { describe, expect, it, vi } from "vitest";
import { CompressionType } from "../src/wire/commands/enums.js";

// The library as it is, its init() counted: a second init swaps its instance in asynchronously, at
// no moment a test could wait for, so the test counts the calls instead. One wrapper for every copy
// of the codec module, as they share the one library.
const library = vi.hoisted(() => ({ inits: 0, wrapped: undefined as object | undefined }));
vi.mock("@bokuweb/zstd-wasm", async (importOriginal) => {
  const original = await importOriginal<typeof import("@bokuweb/zstd-wasm")>();
  library.wrapped ??= {
    ...original,
    init: () => {
      library.inits++;
      return original.init();
    },
  };
  return library.wrapped;
});

type CodecModule = typeof import("../src/wire/compression.js");

const ZSTD = CompressionType.ZSTD;
const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const data = new TextEncoder().encode("abcdefgh".repeat(200));

/** Whether `copy` writes zstd frames that read back. */
function writesFrames(copy: CodecModule): void {
  const frame = copy.compress(ZSTD, data);
  expect([...frame.subarray(0, 4)]).toEqual(MAGIC);
  expect(copy.decompress(ZSTD, frame, data.length)).toEqual(data);
}

// A library something else initialised is zstdForeignInit.test.ts: each file has a process of its
// own, so each starts with the library not initialised.
describe("ZSTD's initialisation", () => {
  it("is shared by two copies of the codec module: the second never initialises it again", async () => {
    const first = await import("../src/wire/compression.js");
    await first.loadCodecs();
    const early = first.compress(ZSTD, data);
    vi.resetModules();
    const second: CodecModule = await import("../src/wire/compression.js");
    expect(second).not.toBe(first);
    await second.loadCodecs();
    await second.loadCodecs();
    expect(library.inits, "the library's init() calls").toBe(1);
    writesFrames(first);
    writesFrames(second);
    expect(second.decompress(ZSTD, early, data.length)).toEqual(data);
  });
});

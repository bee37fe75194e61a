// ZSTD's initialisation when something other than this package initialised @bokuweb/zstd-wasm
// first and used it (its own init() is not idempotent: zstdInit.test.ts). In a file of its own, so
// the library is not initialised when the test begins.

import { sleep } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { CompressionType } from "../src/wire/commands/enums.js";

const ZSTD = CompressionType.ZSTD;
const data = new TextEncoder().encode("abcdefgh".repeat(200));

describe("ZSTD's initialisation", () => {
  it("leaves alone a library something else initialised and used", async () => {
    const zstd = await import("@bokuweb/zstd-wasm");
    await zstd.init();
    const theirs = zstd.compress(data, 3);
    const copy = await import("../src/wire/compression.js");
    await copy.loadCodecs();
    // init() swaps a new instance in asynchronously: give one that was started time to land.
    await sleep(200);
    const frame = copy.compress(ZSTD, data);
    expect([...frame.subarray(0, 4)]).toEqual([0x28, 0xb5, 0x2f, 0xfd]);
    expect(copy.decompress(ZSTD, frame, data.length)).toEqual(data);
    expect(zstd.decompress(theirs)).toEqual(data);
  });
});

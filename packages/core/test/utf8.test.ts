import { describe, expect, it } from "vitest";
import { utf8Bytes } from "../src/utf8.js";

// utf8Bytes must give exactly TextEncoder's bytes, on its ASCII loop and on every way off it.
const reference = new TextEncoder();

describe("utf8Bytes", () => {
  it.each([
    ["empty", ""],
    ["ASCII", "application/octet-stream"],
    ["ASCII at the edge of the loop", "k".repeat(64)],
    ["ASCII past the loop", "k".repeat(65)],
    ["DEL, the last ASCII", "a\u007f"],
    ["two-byte characters", "clé-ü"],
    ["three-byte characters", "键-€"],
    ["a surrogate pair", "key-\u{1f511}"],
    ["a lone surrogate", "key-\ud800"],
    ["non-ASCII last", `${"a".repeat(63)}é`],
  ])("encodes %s as TextEncoder does", (_, text) => {
    const bytes = utf8Bytes(text);
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect([...bytes]).toEqual([...reference.encode(text)]);
  });
});

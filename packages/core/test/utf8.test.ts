import { describe, expect, it } from "vitest";
import { utf8Bytes } from "../src/utf8.js";

const reference = new TextEncoder();

describe("utf8Bytes", () => {
  it.each([
    ["empty", ""],
    ["short ASCII", "application/json"],
    ["ASCII at the scratch buffer's length", "a".repeat(64)],
    ["ASCII past it", "a".repeat(65)],
    ["two-byte letters that fit", "é".repeat(32)],
    ["two-byte letters whose UTF-8 is longer than the scratch buffer", "é".repeat(40)],
    ["three-byte letters", "€".repeat(30)],
    ["a surrogate pair at the end", `${"a".repeat(62)}😀`],
    ["a lone surrogate", "a\ud800b"],
    ["long mixed text", `{"note":"${"über ".repeat(100)}"}`],
  ])("encodes %s exactly as TextEncoder does", (_, text) => {
    expect(utf8Bytes(text)).toEqual(reference.encode(text));
  });

  it("answers a fresh array each time, so a caller's writes never reach another's bytes", () => {
    const first = utf8Bytes("content-type");
    const second = utf8Bytes("content-type");
    first[0] = 0;
    expect(second).toEqual(reference.encode("content-type"));
    expect(first.buffer).not.toBe(second.buffer);
    expect(utf8Bytes("x")).toEqual(reference.encode("x"));
  });
});

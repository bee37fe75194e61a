import { describe, expect, it } from "vitest";
import { utf8Bytes, utf8Text } from "../src/utf8.js";

// utf8Bytes and utf8Text must give exactly what TextEncoder and a fatal TextDecoder give, on their
// ASCII loops and on every way off them.
const reference = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

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
  ])("encodes %s exactly as TextEncoder does (scratch buffer)", (_, text) => {
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

describe("utf8Text", () => {
  it.each([
    ["empty", ""],
    ["ASCII", "application/octet-stream"],
    ["ASCII at the edge of the loop", "k".repeat(64)],
    ["ASCII past the loop", "k".repeat(65)],
    ["two-byte characters", "clé-ü"],
    ["a surrogate pair", "key-\u{1f511}"],
    ["non-ASCII last", `${"a".repeat(63)}é`],
  ])("decodes %s as a fatal TextDecoder does", (_, text) => {
    expect(utf8Text(reference.encode(text))).toBe(text);
  });

  it("drops a leading byte order mark as the decoder does", () => {
    const bytes = Uint8Array.of(0xef, 0xbb, 0xbf, 0x61);
    expect(utf8Text(bytes)).toBe(strict.decode(bytes));
    expect(utf8Text(bytes)).toBe("a");
  });

  it.each([
    ["a lone continuation byte", [0x61, 0x80]],
    ["a cut two-byte character", [0x61, 0xc3]],
    ["an overlong encoding", [0xc0, 0xaf]],
    ["a long value with a bad byte", [...reference.encode("k".repeat(70)), 0xff]],
  ])("throws on %s, as the decoder does", (_, bytes) => {
    const value = Uint8Array.from(bytes);
    expect(() => strict.decode(value)).toThrow();
    expect(() => utf8Text(value)).toThrow();
  });
});

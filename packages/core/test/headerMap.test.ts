import { describe, expect, it } from "vitest";
import { writeRetryCount } from "../src/brokerEntry.js";
import { HeaderMap, headerNames, readRetryCount } from "../src/index.js";

describe("HeaderMap", () => {
  it("folds ASCII case on names, and only ASCII", () => {
    const h = new HeaderMap({ "Content-Type": "text/plain" });
    expect(h.getString("CONTENT-TYPE")).toBe("text/plain");
    expect([...h.keys()]).toEqual(["content-type"]);
    h.set("Ä-Key", "x");
    expect(h.has("ä-key")).toBe(false);
    expect(h.has("Ä-KEY")).toBe(true);
  });

  it("keeps insertion order, and a replaced value keeps its place", () => {
    const h = new HeaderMap([
      ["b", "1"],
      ["a", "2"],
      ["c", "3"],
    ]);
    h.set("A", "changed");
    expect([...h.keys()]).toEqual(["b", "a", "c"]);
    expect(h.getString("a")).toBe("changed");
  });

  it("holds bytes; getString answers undefined for invalid UTF-8", () => {
    const binary = new Uint8Array([0, 13, 10, 0xff]);
    const h = new HeaderMap().set("x-bin", binary).set("x-empty", "");
    expect(h.get("x-bin")).toEqual(binary);
    expect(h.getString("x-bin")).toBeUndefined();
    expect(h.getString("x-empty")).toBe("");
    expect(h.getString("missing")).toBeUndefined();
  });

  it("compares without regard to order, and clones deeply", () => {
    const a = new HeaderMap({ x: "1", y: "2" });
    const b = new HeaderMap({ y: "2", x: "1" });
    expect(a.equals(b)).toBe(true);
    const copy = a.clone();
    copy.get("x")![0] = 0;
    expect(a.getString("x")).toBe("1");
    expect(a.equals(copy)).toBe(false);
  });

  it("deletes and counts", () => {
    const h = new HeaderMap({ a: "1", b: "2" });
    expect(h.delete("A")).toBe(true);
    expect(h.delete("a")).toBe(false);
    expect(h.size).toBe(1);
  });

  it("finds every name of a map of many (indexed past a few dozen) through sets, replacements and deletes", () => {
    const h = new HeaderMap();
    const names = Array.from({ length: 200 }, (_, i) => `Name-${i}`);
    for (const [i, name] of names.entries()) {
      h.set(name, String(i));
      // Every name set so far is found, whichever side of the index threshold the map is.
      expect(h.getString(names[Math.floor(i / 2)]!)).toBe(String(Math.floor(i / 2)));
    }
    h.set("NAME-7", "replaced");
    expect([...h.keys()][7]).toBe("name-7");
    for (const i of [0, 50, 199]) expect(h.delete(names[i]!)).toBe(true);
    expect(h.size).toBe(197);
    expect(h.has("name-50")).toBe(false);
    expect(h.getString("name-51")).toBe("51");
    expect(h.getString("name-7")).toBe("replaced");
    expect([...h.keys()].slice(0, 2)).toEqual(["name-1", "name-2"]);
    h.set("name-50", "back");
    expect([...h.keys()].at(-1)).toBe("name-50");
    const copy = new HeaderMap(h);
    expect(copy.equals(h) && h.clone().equals(copy)).toBe(true);
    while (h.size > 3) h.delete([...h.keys()][0]!);
    expect([...h.entries()].map(([n, v]) => [n, new TextDecoder().decode(v)])).toEqual([
      ["name-197", "197"],
      ["name-198", "198"],
      ["name-50", "back"],
    ]);
  });

  it("refuses an empty name with a message naming the fix, on an empty map too", () => {
    expect(() => new HeaderMap().set("", "x")).toThrow(/cannot be empty/);
    expect(() => new HeaderMap().get("")).toThrow(/cannot be empty/);
    expect(() => new HeaderMap({ a: "1" }).has("")).toThrow(/cannot be empty/);
  });

  it("keeps empty maps apart: writing one (or its clone) never shows in another", () => {
    const first = new HeaderMap();
    const second = new HeaderMap();
    const copy = first.clone();
    first.set("a", "1");
    copy.set("b", "2");
    expect([...second.keys()]).toEqual([]);
    expect([...first.keys()]).toEqual(["a"]);
    expect([...copy.keys()]).toEqual(["b"]);
    expect(new HeaderMap().size).toBe(0);
  });

  it("reads the retry count as RustStream does: absent or malformed is 0", () => {
    expect(readRetryCount(new HeaderMap())).toBe(0);
    expect(readRetryCount(new HeaderMap({ [headerNames.retryCount]: "x3" }))).toBe(0);
    expect(readRetryCount(new HeaderMap({ [headerNames.retryCount]: "-1" }))).toBe(0);
    expect(readRetryCount(writeRetryCount(new HeaderMap(), 4))).toBe(4);
  });

  it("answers a value set as a string as the same text and as its UTF-8 bytes, whichever is read first", () => {
    const utf8 = new TextEncoder();
    const bytesFirst = new HeaderMap({ "content-type": "application/json", note: "über" });
    expect(bytesFirst.get("note")).toEqual(utf8.encode("über"));
    expect(bytesFirst.getString("note")).toBe("über");
    const textFirst = new HeaderMap({ note: "über" });
    expect(textFirst.getString("note")).toBe("über");
    expect(textFirst.get("note")).toEqual(utf8.encode("über"));
    expect([...textFirst.entries()]).toEqual([["note", utf8.encode("über")]]);
    expect(textFirst.equals(new HeaderMap({ note: utf8.encode("über") }))).toBe(true);
  });

  it("reads a lone surrogate back as U+FFFD, as its UTF-8 bytes decode", () => {
    const h = new HeaderMap({ a: "x\ud800y" });
    expect(h.getString("a")).toBe("x\ufffdy");
    expect(h.get("a")).toEqual(new Uint8Array([0x78, 0xef, 0xbf, 0xbd, 0x79]));
  });

  it("gives a clone of string values and of bytes values the same answers, kept apart", () => {
    const h = new HeaderMap({ text: "1", bytes: new Uint8Array([1, 2]) });
    const copy = h.clone();
    h.get("bytes")![0] = 9;
    h.set("text", "2");
    expect(copy.getString("text")).toBe("1");
    expect(copy.get("bytes")).toEqual(new Uint8Array([1, 2]));
    const built = new HeaderMap(copy);
    copy.set("text", "3");
    expect(built.getString("text")).toBe("1");
    expect([...built.keys()]).toEqual(["text", "bytes"]);
  });

  it("gives each value as held: text set as a string until its bytes are read, bytes as bytes", () => {
    const bytes = new Uint8Array([0xff, 0x00]);
    const h = new HeaderMap([
      ["text", "über"],
      ["bytes", bytes],
      ["surrogate", "x\ud800y"],
      ["read", "r"],
    ]);
    h.get("read");
    expect([...h.entriesAsHeld()]).toEqual([
      ["text", "über"],
      ["bytes", bytes],
      ["surrogate", "x\ufffdy"],
      ["read", new Uint8Array([0x72])],
    ]);
    // Whatever form a value is held in, it stands for the same bytes entries() gives.
    const encoded = [...h.entriesAsHeld()].map(([name, value]) => [
      name,
      typeof value === "string" ? new TextEncoder().encode(value) : value,
    ]);
    expect(encoded).toEqual([...h.entries()]);
  });
});

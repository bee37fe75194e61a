import { HeaderMap, isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import { headersOf, maxHeaderNesting, propertiesOf } from "../src/amqpHeaders.js";
import type { TableValue } from "../src/topology/topology.js";

// A delivery's headers from the table amqplib decoded: any client on the broker writes it, and the
// server passes it on. amqplib decodes a table nested about 4,500 deep (32 KB, under the default
// frame_max of 128 KiB); turning it into a header's text overflowed the stack here.

function nested(depth: number): TableValue {
  let value: TableValue = "leaf";
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { n: value } : [value];
  return value;
}

describe("headersOf", () => {
  it("reads back the table and properties the publisher writes", () => {
    const sent = new HeaderMap({
      "content-type": "text/plain",
      "x-a": "1",
      "x-b": new Uint8Array([0, 255]),
    });
    const { headers, unreadable } = headersOf(propertiesOf(sent, "q"));
    expect(unreadable).toBeUndefined();
    expect(headers.equals(sent)).toBe(true);
  });

  it("refuses a property header of bytes that are not UTF-8: they would arrive as other bytes", () => {
    const sent = new HeaderMap({ "content-type": new Uint8Array([0x61, 0xff]) });
    let refused: unknown;
    try {
      propertiesOf(sent, "q");
    } catch (error) {
      refused = error;
    }
    expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
    expect(String(refused)).toContain("content-type");
  });

  it("refuses a header named __proto__: the table would take it as its prototype, and lose it", () => {
    let refused: unknown;
    try {
      propertiesOf(new HeaderMap([["__proto__", "x"]]), "q");
    } catch (error) {
      refused = error;
    }
    expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
  });

  it("a header nested 4,500 deep is left out with core's error, and the others arrive", () => {
    const read = headersOf({ headers: { deep: nested(4500), "x-kept": "yes" } });
    expect(isRustStreamError(read.unreadable, "invalid-argument"), String(read.unreadable)).toBe(
      true,
    );
    expect(String(read.unreadable)).toContain('"deep"');
    expect(read.headers.has("deep")).toBe(false);
    expect(read.headers.getString("x-kept")).toBe("yes");
  });

  it("a nested table whose __proto__ entry is bytes, or shaped like a Buffer's JSON, arrives as JSON", () => {
    // amqplib fills a table entry by entry, so a `__proto__` entry sets the table's prototype.
    const table: Record<string, TableValue> = {};
    table.__proto__ = Buffer.from("ab");
    table.x = "1";
    const { headers, unreadable } = headersOf({
      headers: { t: table, u: { type: "Buffer", data: 5 } },
    });
    expect(unreadable).toBeUndefined();
    expect(JSON.parse(headers.getString("t")!)).toEqual({ x: "1" });
    expect(JSON.parse(headers.getString("u")!)).toEqual({ type: "Buffer", data: 5 });
  });

  it("a table whose own __proto__ entry set its prototype reads only its own entries", () => {
    // The names are walked in place for a plain table; one with another prototype must not show
    // the prototype's names (a byte array's indices, a table's entries) as headers.
    const bytes: Record<string, TableValue> = {};
    bytes.__proto__ = Buffer.from("ab");
    bytes.x = "1";
    const table: Record<string, TableValue> = {};
    table.__proto__ = { y: "2" };
    table.x = "1";
    for (const headers of [bytes, table]) {
      const read = headersOf({ headers });
      expect(read.unreadable).toBeUndefined();
      expect([...read.headers.keys()]).toEqual(["x"]);
    }
  });

  it(`a header nested ${maxHeaderNesting} deep still arrives, as JSON`, () => {
    const { headers, unreadable } = headersOf({ headers: { deep: nested(maxHeaderNesting) } });
    expect(unreadable).toBeUndefined();
    expect(headers.getString("deep")).toContain("leaf");
  });
});

import { describe, expect, it } from "vitest";
import { headersOf, maxHeaderNesting } from "../src/amqpHeaders.js";
import { guardFirstFrame } from "../src/client/contentHeader.js";
import type { LinkProperties } from "../src/link.js";
import { unreadableHeaders } from "../src/names.js";
import {
  deepHeaderFrame,
  frameOfProperties,
  frameWithTable,
  headerFrame,
  readFrame,
} from "./hostileFrames.js";

// The content header check in front of amqplib's decoder (src/client/contentHeader.ts), read back
// through amqplib's own frame reader: what amqplib would have thrown on (and so closed the
// connection, to have the same message delivered again) is read instead as a message whose decode
// error says why, its body and other properties as sent.

/** The delivery's headers from the frame's properties, as a consumer reads them. */
function readHeaders(frame: Buffer) {
  return headersOf(readFrame(guardFirstFrame(frame)).fields as unknown as LinkProperties);
}

describe("the content header check", () => {
  it("a table nested 10,000 deep: amqplib alone overflows its stack; checked, it is marked unreadable", () => {
    const frame = deepHeaderFrame(10_000);
    expect(() => readFrame(frame)).toThrow(RangeError);
    const read = readFrame(guardFirstFrame(frame));
    expect(read.size).toBe(3);
    expect(read.fields.messageId).toBe("m-1");
    expect(Object.keys(read.fields.headers as object)).toEqual([unreadableHeaders]);
    const { unreadable } = headersOf(read.fields as unknown as LinkProperties);
    expect(unreadable?.message).toContain(
      `the header "d" nests tables or arrays more than ${maxHeaderNesting} deep`,
    );
  });

  it(`gives the verdict headersOf gives: ${maxHeaderNesting} levels pass untouched, one more is refused`, () => {
    const within = deepHeaderFrame(maxHeaderNesting);
    expect(guardFirstFrame(within)).toBe(within);
    expect(readHeaders(within).unreadable).toBeUndefined();
    const past = deepHeaderFrame(maxHeaderNesting + 1);
    expect(guardFirstFrame(past)).not.toBe(past);
    expect(readHeaders(past).unreadable?.message).toContain("nests tables or arrays");
    // The same bytes decoded by amqplib alone get the same verdict from headersOf.
    const alone = headersOf(readFrame(past).fields as unknown as LinkProperties);
    expect(alone.unreadable?.message).toBe(readHeaders(past).unreadable?.message);
  });

  it("arrays nest as tables do", () => {
    const frame = deepHeaderFrame(10_000, { tag: "A" });
    expect(() => readFrame(frame)).toThrow(RangeError);
    expect(readHeaders(frame).unreadable?.message).toContain("nests tables or arrays");
  });

  it("an unknown value type: amqplib alone throws; checked, marked unreadable naming the type", () => {
    const frame = frameWithTable(Buffer.from([1, 0x61, 0x51, 0]));
    expect(() => readFrame(frame)).toThrow(TypeError);
    expect(readHeaders(frame).unreadable?.message).toContain('the value type "Q"');
  });

  it("a length past its table: marked unreadable, the properties after the table kept", () => {
    const frame = frameWithTable(Buffer.from([1, 0x61, 0x53, 0, 0, 0, 200, 0x78]));
    const read = readFrame(guardFirstFrame(frame));
    expect(read.fields.messageId).toBe("m-1");
    expect(headersOf(read.fields as unknown as LinkProperties).unreadable?.message).toContain(
      "runs past its table",
    );
  });

  it("a table that runs past the properties: only the marking table is left", () => {
    const frame = frameWithTable(Buffer.alloc(0));
    // The table's declared length (0) made 50,000: past the frame.
    frame.writeUInt32BE(50_000, 7 + 14);
    const read = readFrame(guardFirstFrame(frame));
    expect(read.size).toBe(3);
    expect(Object.keys(read.fields.headers as object)).toEqual([unreadableHeaders]);
    expect(read.fields.messageId).toBeUndefined();
  });

  it("properties cut before their flags: amqplib alone throws; checked, marked unreadable", () => {
    const frame = frameOfProperties(Buffer.from([0x20]));
    expect(() => readFrame(frame)).toThrow(RangeError);
    const read = readFrame(guardFirstFrame(frame));
    expect(read.size).toBe(3);
    expect(headersOf(read.fields as unknown as LinkProperties).unreadable?.message).toContain(
      "not well-formed AMQP",
    );
  });

  it("a well-formed frame, and one not yet whole, are passed on as the same buffer", () => {
    const frame = headerFrame({
      contentType: "application/json",
      messageId: "m-2",
      headers: { "x-a": "1", "x-death": [{ count: 2, reason: "rejected", queue: "q" }], n: 5 },
    });
    expect(guardFirstFrame(frame)).toBe(frame);
    const part = frame.subarray(0, frame.length - 4);
    expect(guardFirstFrame(part)).toBe(part);
  });

  it("what follows the checked frame is kept, byte for byte", () => {
    const next = headerFrame({ messageId: "m-3" });
    const read = readFrame(guardFirstFrame(Buffer.concat([deepHeaderFrame(10_000), next])));
    expect(read.rest.equals(next)).toBe(true);
  });
});

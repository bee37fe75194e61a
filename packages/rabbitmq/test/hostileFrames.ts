import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// Content header frames as a peer could write them, built as bytes (amqplib's own encoder recurses
// too, so it cannot write the deep ones), and amqplib's own frame reader, to read them back.

// amqplib exports no subpath: its modules are loaded by their path in the installed package.
const require = createRequire(import.meta.url);
const amqplibDir = dirname(require.resolve("amqplib"));
const frames = require(join(amqplibDir, "lib", "frame.js")) as {
  parseFrame: (bytes: Buffer, max: number) => false | { rest: Buffer };
  decodeFrame: (frame: unknown) => { fields: Record<string, unknown>; size: number };
};
const defs = require(join(amqplibDir, "lib", "defs.js")) as {
  BasicProperties: number;
  encodeProperties: (id: number, channel: number, size: number, fields: object) => Buffer;
};

/** A content header frame amqplib writes: its properties for a body of `bodySize` bytes. */
export function headerFrame(fields: object, bodySize = 3, channel = 1): Buffer {
  return defs.encodeProperties(defs.BasicProperties, channel, bodySize, fields);
}

/** The first frame of `bytes` as amqplib reads it, and what follows it. */
export function readFrame(bytes: Buffer): {
  fields: Record<string, unknown>;
  size: number;
  rest: Buffer;
} {
  const frame = frames.parseFrame(bytes, 0);
  if (frame === false) throw new Error("not a whole frame");
  return { ...frames.decodeFrame(frame), rest: frame.rest };
}

/**
 * A content header frame whose header table holds one entry `d` of tables (or arrays, by `tag`)
 * nested `depth` deep, message id "m-1" and a body of 3 bytes: the entry's value is nested
 * `depth` levels. A table level is 7 bytes (a name, the tag, a length), an array's inner level 5.
 */
export function deepHeaderFrame(depth: number, options: { tag?: string } = {}): Buffer {
  const tag = (options.tag ?? "F").charCodeAt(0);
  const named = options.tag !== "A";
  const inner = named ? 7 : 5;
  const nested = Buffer.alloc(7 + (depth - 1) * inner);
  let at = 0;
  for (let level = 0; level < depth; level++) {
    if (level === 0 || named) {
      nested[at++] = 1;
      nested[at++] = "d".charCodeAt(0);
    }
    nested[at++] = tag;
    at = nested.writeUInt32BE(nested.length - at - 4, at);
  }
  return frameWithTable(nested);
}

/** A content header frame whose header table is `table` as given, and message id "m-1". */
export function frameWithTable(table: Buffer): Buffer {
  const id = Buffer.from("m-1");
  const properties = Buffer.concat([
    u16(0x2000 | 0x0080),
    u32(table.length),
    table,
    Buffer.from([id.length]),
    id,
  ]);
  return frameOfProperties(properties);
}

/** A content header frame on channel 1 for a body of 3 bytes, its properties (flags on) as given. */
export function frameOfProperties(properties: Uint8Array): Buffer {
  const payload = Buffer.concat([u16(60), u16(0), Buffer.alloc(4), u32(3), properties]);
  return Buffer.concat([
    Buffer.from([2]),
    u16(1),
    u32(payload.length),
    payload,
    Buffer.from([0xce]),
  ]);
}

/** The properties (flags on) of a content header frame. */
export function propertiesOfFrame(frame: Buffer): Buffer {
  return frame.subarray(7 + 12, frame.length - 1);
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  return bytes;
}

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

import { HeaderMap, type ReadonlyHeaderMap } from "@ruststream/core";

// RustStream's file broker writes a message with headers as `rs1:` or `rs2:` followed by
// base64(u32 BE header-block length | header block | payload). A message without headers is
// written verbatim, so plain SeaStreamer tools read it as it is.
const RS1 = "rs1:";
const RS2 = "rs2:";
const PREFIX_BYTES = 4;

const utf8 = new TextEncoder();
// `ignoreBOM` keeps a leading U+FEFF: by default a TextDecoder drops it, and with it the first
// character of a header name or value.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

function startsWithPrefix(payload: Uint8Array): boolean {
  return (
    payload.length >= PREFIX_BYTES &&
    payload[0] === 0x72 && // r
    payload[1] === 0x73 && // s
    (payload[2] === 0x31 || payload[2] === 0x32) && // 1 | 2
    payload[3] === 0x3a // :
  );
}

// What Rust's `str::trim` strips (the Unicode White_Space set), which RustStream's reader applies to
// both halves of a line. JavaScript's `trim` differs: it keeps U+0085 and strips U+FEFF, so a value
// ending with U+0085 would lose it in a Rust reader, and one starting with U+FEFF would not be written
// as the line RustStream writes.
const RUST_WHITESPACE =
  "[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const EDGE_WHITESPACE = new RegExp(`^${RUST_WHITESPACE}|${RUST_WHITESPACE}$`);

function lineSafe(text: string): boolean {
  return !/[\r\n]/.test(text) && !EDGE_WHITESPACE.test(text);
}

/** The header as text, when a `name: value` line carries it exactly. */
function asLine(name: string, value: Uint8Array): string | undefined {
  let text: string;
  try {
    text = strictUtf8.decode(value);
  } catch {
    return undefined;
  }
  return lineSafe(text) && lineSafe(name) && !name.includes(":") ? `${name}: ${text}\n` : undefined;
}

function lineBlock(headers: ReadonlyHeaderMap): Uint8Array | undefined {
  let block = "";
  for (const [name, value] of headers) {
    const line = asLine(name, value);
    if (line === undefined) return undefined;
    block += line;
  }
  return utf8.encode(block);
}

function binaryBlock(headers: ReadonlyHeaderMap): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 0;
  for (const [name, value] of headers) {
    const n = utf8.encode(name);
    parts.push(n, value);
    size += 8 + n.length + value.length;
  }
  const block = new Uint8Array(size);
  const view = new DataView(block.buffer);
  let at = 0;
  for (const part of parts) {
    view.setUint32(at, part.length);
    block.set(part, at + 4);
    at += 4 + part.length;
  }
  return block;
}

/** The bytes written to the file for a payload and its headers. */
export function encodeEnvelope(payload: Uint8Array, headers: ReadonlyHeaderMap): Uint8Array {
  let block: Uint8Array | undefined;
  let prefix = RS1;
  if (headers.size === 0) {
    // A headerless payload that happens to start like an envelope is enveloped, so it reads back as itself.
    if (!startsWithPrefix(payload)) return payload;
    block = new Uint8Array(0);
  } else {
    block = lineBlock(headers);
    if (block === undefined) {
      block = binaryBlock(headers);
      prefix = RS2;
    }
  }
  const body = Buffer.allocUnsafe(4 + block.length + payload.length);
  body.writeUInt32BE(block.length, 0);
  body.set(block, 4);
  body.set(payload, 4 + block.length);
  return utf8.encode(prefix + body.toString("base64"));
}

export interface Unwrapped {
  readonly payload: Uint8Array;
  readonly headers: HeaderMap;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const EDGE_RUNS = new RegExp(`^${RUST_WHITESPACE}+|${RUST_WHITESPACE}+$`, "g");

/**
 * The headers of an `rs1:` block, read as RustStream reads them: the block as lossy UTF-8, one
 * header per line split at its first colon, both halves trimmed (which takes the `\r` of a `\r\n`
 * too), a line without a colon skipped.
 * Both writers put every header on a `name: value` line that survives this unchanged; reading other
 * lines as RustStream does (an older release's, a hand-written one's) keeps such an envelope an
 * envelope, instead of handing its base64 over as the payload.
 */
function parseLines(block: Uint8Array): HeaderMap {
  const headers = new HeaderMap();
  for (const line of lenientUtf8.decode(block).split("\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).replace(EDGE_RUNS, "");
    // RustStream's map holds a header with an empty name; ours cannot, so only that header is left
    // out, and the payload arrives as it was written.
    if (name === "") continue;
    headers.set(name, line.slice(colon + 1).replace(EDGE_RUNS, ""));
  }
  return headers;
}

function parseBinary(block: Uint8Array): HeaderMap | undefined {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  const headers = new HeaderMap();
  let at = 0;
  while (at < block.length) {
    if (at + 4 > block.length) return undefined;
    const nameLength = view.getUint32(at);
    const valueAt = at + 4 + nameLength;
    if (valueAt + 4 > block.length) return undefined;
    const valueLength = view.getUint32(valueAt);
    const end = valueAt + 4 + valueLength;
    if (end > block.length) return undefined;
    const name = lenientUtf8.decode(block.subarray(at + 4, valueAt));
    // As in `parseLines`: the nameless header is the one part of the message ours cannot hold.
    // A view, as the payload is: the body was decoded for this envelope alone.
    if (name !== "") headers.set(name, block.subarray(valueAt + 4, end));
    at = end;
  }
  return headers;
}

/**
 * Reads what `encodeEnvelope` wrote. Tolerant, as RustStream is: anything that is not a valid
 * envelope is a raw payload without headers.
 */
export function decodeEnvelope(wire: Uint8Array): Unwrapped {
  const raw = { payload: wire, headers: new HeaderMap() };
  if (!startsWithPrefix(wire)) return raw;
  const encoded = Buffer.from(
    wire.buffer,
    wire.byteOffset + PREFIX_BYTES,
    wire.length - PREFIX_BYTES,
  ).toString("latin1");
  if (!BASE64.test(encoded)) return raw;
  const body = Buffer.from(encoded, "base64");
  if (body.length < 4) return raw;
  const blockLength = body.readUInt32BE(0);
  if (4 + blockLength > body.length) return raw;
  // Plain Uint8Array views, not Buffers: header values and payloads compare equal to what was sent.
  const block = new Uint8Array(body.buffer, body.byteOffset + 4, blockLength);
  const headers = wire[2] === 0x31 ? parseLines(block) : parseBinary(block);
  if (headers === undefined) return raw;
  const payload = new Uint8Array(
    body.buffer,
    body.byteOffset + 4 + blockLength,
    body.length - 4 - blockLength,
  );
  return { payload, headers };
}

/**
 * The first header of an envelope, read from the start of its base64 alone (at most `within` bytes
 * of its header block are decoded), for a reader that looks at one header of every frame: a whole
 * decode would cost each frame its size. `undefined` when `wire` is no envelope, or its header
 * block does not start with a whole header within those bytes (an `rs1:` block's first line, an
 * `rs2:` block's first name and value).
 */
export function firstHeaderOf(
  wire: Uint8Array,
  within: number,
): readonly [string, Uint8Array] | undefined {
  if (!startsWithPrefix(wire)) return undefined;
  const available = wire.length - PREFIX_BYTES;
  const chars = Math.min(available, Math.ceil((4 + within) / 3) * 4);
  const encoded = Buffer.from(wire.buffer, wire.byteOffset + PREFIX_BYTES, chars).toString(
    "latin1",
  );
  if (!BASE64.test(encoded)) return undefined;
  const head = Buffer.from(encoded, "base64");
  if (head.length < 4) return undefined;
  const blockLength = head.readUInt32BE(0);
  // The whole body's length follows from the base64's, so a block longer than the body (which
  // `decodeEnvelope` reads as no envelope) is no envelope here either.
  const padding = wire[wire.length - 1] === 0x3d ? (wire[wire.length - 2] === 0x3d ? 2 : 1) : 0;
  if (4 + blockLength > Math.floor((available * 3) / 4) - padding) return undefined;
  const block = new Uint8Array(
    head.buffer,
    head.byteOffset + 4,
    Math.min(blockLength, head.length - 4),
  );
  if (wire[2] === 0x31) {
    const newline = block.indexOf(0x0a);
    if (newline < 0 && block.length < blockLength) return undefined;
    const line = lenientUtf8.decode(newline < 0 ? block : block.subarray(0, newline));
    const colon = line.indexOf(":");
    if (colon < 0) return undefined;
    const name = line.slice(0, colon).replace(EDGE_RUNS, "");
    if (name === "") return undefined;
    return [name, utf8.encode(line.slice(colon + 1).replace(EDGE_RUNS, ""))];
  }
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  if (block.length < 4) return undefined;
  const valueAt = 4 + view.getUint32(0);
  if (valueAt + 4 > block.length) return undefined;
  const end = valueAt + 4 + view.getUint32(valueAt);
  if (end > block.length) return undefined;
  const name = lenientUtf8.decode(block.subarray(4, valueAt));
  if (name === "") return undefined;
  return [name, block.subarray(valueAt + 4, end)];
}

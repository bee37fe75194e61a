import { HeaderMap, type ReadonlyHeaderMap } from "@ruststream/core";

// RustStream's frame for single-blob transports (list values, pub/sub payloads, delayed entries):
//   u32 BE header_count | (u32 BE name_len | name | u32 BE value_len | value)* | payload
// Decoding is tolerant: anything that is not a well-formed frame is a raw payload without headers,
// so a plain LPUSH or PUBLISH from a tool still arrives.

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A message as a frame carries it. */
export interface Framed {
  readonly headers: HeaderMap;
  readonly payload: Uint8Array;
}

export function encodeFrame(headers: ReadonlyHeaderMap, payload: Uint8Array): Buffer {
  const names: Uint8Array[] = [];
  const values: Uint8Array[] = [];
  let size = 4 + payload.length;
  for (const [name, value] of headers) {
    const n = encoder.encode(name);
    names.push(n);
    values.push(value);
    size += 8 + n.length + value.length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.writeUInt32BE(names.length, 0);
  for (let i = 0; i < names.length; i++) {
    const n = names[i]!;
    const v = values[i]!;
    at = out.writeUInt32BE(n.length, at);
    out.set(n, at);
    at += n.length;
    at = out.writeUInt32BE(v.length, at);
    out.set(v, at);
    at += v.length;
  }
  out.set(payload, at);
  return out;
}

function view(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start);
}

/**
 * The payload of the common frame, the one without headers (count 0), or `undefined` for any other:
 * a hot path reads it without a `DataView` or a {@link Framed}.
 */
export function bareFramePayload(bytes: Uint8Array): Uint8Array | undefined {
  return bytes.length >= 4 && bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0 && bytes[3] === 0
    ? view(bytes, 4, bytes.length)
    : undefined;
}

export function decodeFrame(bytes: Uint8Array): Framed {
  const bare = bareFramePayload(bytes);
  if (bare !== undefined) return { headers: new HeaderMap(), payload: bare };
  const raw = { headers: new HeaderMap(), payload: view(bytes, 0, bytes.length) };
  if (bytes.length < 4) return raw;
  const data = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const count = data.getUint32(0);
  // A count no frame of this size could hold: not a frame.
  if (count > (bytes.length - 4) / 8) return raw;
  const headers = new HeaderMap();
  let at = 4;
  for (let i = 0; i < count; i++) {
    if (at + 4 > bytes.length) return raw;
    const nameLength = data.getUint32(at);
    at += 4;
    if (at + nameLength + 4 > bytes.length) return raw;
    let name: string;
    try {
      name = decoder.decode(view(bytes, at, at + nameLength));
    } catch {
      return raw;
    }
    at += nameLength;
    const valueLength = data.getUint32(at);
    at += 4;
    if (at + valueLength > bytes.length) return raw;
    // RustStream's map holds a header with an empty name and its frame carries it; ours cannot hold
    // one. The frame is still one, so the payload and the other headers arrive: handing the whole
    // frame over as a raw payload would corrupt the message to save a header no reader here can name.
    if (name !== "") headers.set(name, view(bytes, at, at + valueLength));
    at += valueLength;
  }
  return { headers, payload: view(bytes, at, bytes.length) };
}

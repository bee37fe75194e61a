import { HeaderMap, type ReadonlyHeaderMap, RustStreamError } from "@ruststream/core";
import { type Arg, bytesOf, type Command, type Reply, text } from "../client/resp.js";
import { streamFields } from "../names.js";

const prefix = Buffer.from(streamFields.headerPrefix);

/** One stream entry as read: its id and its message. */
export interface StreamEntry {
  readonly id: string;
  readonly payload: Uint8Array;
  readonly headers: HeaderMap;
  /** Why the entry holds no message (no payload field), or `undefined`. */
  readonly unreadable: Error | undefined;
}

/** An entry as a subscription holds it, read or claimed: with the deliveries the group counted. */
export interface HeldEntry {
  readonly entry: StreamEntry;
  readonly deliveryCount: number;
}

/**
 * The fields of an entry: the payload, then one `h:<name>` field per header. Bytes go as Buffers,
 * so they never pass through a string; a header value the map still holds as text goes as that
 * text, which the client writes as its UTF-8, the same bytes, without encoding it twice.
 */
export function entryFields(headers: ReadonlyHeaderMap, payload: Uint8Array): Arg[] {
  const fields: Arg[] = [
    streamFields.payload,
    Buffer.from(payload.buffer, payload.byteOffset, payload.length),
  ];
  for (const [name, value] of headers.entriesAsHeld()) {
    fields.push(
      `${streamFields.headerPrefix}${name}`,
      typeof value === "string" ? value : Buffer.from(value.buffer, value.byteOffset, value.length),
    );
  }
  return fields;
}

/** `XADD key [MAXLEN ~ n] * fields`, as every append of this package writes it. */
export function xadd(key: string, fields: Arg[], maxLen: number | undefined): Command {
  const trim: Arg[] = maxLen === undefined ? [] : ["MAXLEN", "~", maxLen];
  return { name: "XADD", args: [key, ...trim, "*", ...fields] };
}

/**
 * Reads an entry's fields. Tolerant, as in RustStream: unknown fields are ignored, so an entry
 * another tool wrote arrives and the runtime's decode policy decides about it, instead of the read
 * failing. Unlike RustStream, an entry without the payload field is marked unreadable rather than
 * read as an empty payload (FastStream's `__data__` layout would otherwise reach a bytes handler as
 * a message of nothing).
 */
export function parseEntry(reply: Reply): StreamEntry | undefined {
  if (!Array.isArray(reply) || reply.length < 2) return undefined;
  const id = text(reply[0]);
  const fields = reply[1];
  // An entry deleted while pending reads back as [id, nil].
  if (!Array.isArray(fields)) return undefined;
  let payload: Uint8Array | undefined;
  const headers = new HeaderMap();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const field = fields[i];
    if (!Buffer.isBuffer(field)) continue;
    if (
      field.length === streamFields.payload.length &&
      field.toString("latin1") === streamFields.payload
    ) {
      payload = bytesOf(fields[i + 1]);
    } else if (field.length > prefix.length && field.subarray(0, prefix.length).equals(prefix)) {
      try {
        headers.set(field.subarray(prefix.length).toString("utf8"), bytesOf(fields[i + 1]));
      } catch {
        // A header name core cannot hold: dropped, the rest of the entry still arrives.
      }
    }
  }
  if (payload !== undefined) return { id, payload, headers, unreadable: undefined };
  return {
    id,
    payload: new Uint8Array(0),
    headers,
    unreadable: new RustStreamError(
      "invalid-argument",
      `stream entry ${id} has no "${streamFields.payload}" field: it was not written by RustStream (another framework's layout?), so it holds no message to decode`,
    ),
  };
}

/** The entries of an `XREADGROUP`/`XREAD` reply for one stream: `[[key, [entry...]]]`. */
export function entriesOfRead(reply: Reply): Reply[] {
  if (!Array.isArray(reply)) return [];
  const stream = reply[0];
  if (!Array.isArray(stream)) return [];
  const entries = stream[1];
  return Array.isArray(entries) ? entries : [];
}

import { maxHeaderNesting, nestingRefusal } from "../amqpHeaders.js";
import { unreadableHeaders } from "../names.js";
import { checkTable } from "./tableBytes.js";

// A content header frame (a message's properties) checked before amqplib decodes it, and, where
// amqplib could not read it safely, rewritten so that it can: the header table is swapped for one
// entry naming what was wrong (`unreadableHeaders`), which the delivery reports as its decode
// error. The message is then settled by the decode policy (dead-lettered where a dead letter is
// declared) and the connection goes on; its body is untouched.

/** AMQP frame layout: type (1), channel (2), size (4), payload, end octet. */
const frameHead = 7;
const headerFrameType = 2;
const frameEnd = 0xce;
/** Before the property flags: class id (2), weight (2), body size (8). */
const propertiesAt = 12;

/** The properties after the header table, in flag order: a short string (0) or a fixed size. */
const afterHeaders: ReadonlyArray<readonly [flag: number, size: number]> = [
  [0x1000, 1], // delivery mode
  [0x0800, 1], // priority
  [0x0400, 0], // correlation id
  [0x0200, 0], // reply to
  [0x0100, 0], // expiration
  [0x0080, 0], // message id
  [0x0040, 8], // timestamp
  [0x0020, 0], // type
  [0x0010, 0], // user id
  [0x0008, 0], // app id
  [0x0004, 0], // cluster id
];

/**
 * `received` with its first frame made safe for amqplib if it is a whole content header frame that
 * was not: the same buffer when there is nothing to change.
 */
export function guardFirstFrame(received: Buffer): Buffer {
  if (received.length < frameHead || received[0] !== headerFrameType) return received;
  const size = received.readUInt32BE(3);
  const after = frameHead + size;
  // Not whole yet (amqplib waits for the rest and asks again), or not a frame (amqplib says so).
  if (received.length <= after || received[after] !== frameEnd) return received;
  const payload = received.subarray(frameHead, after);
  const safe = safeProperties(payload);
  if (safe === undefined) return received;
  const frame = Buffer.alloc(frameHead + safe.length + 1);
  received.copy(frame, 0, 0, 3);
  frame.writeUInt32BE(safe.length, 3);
  safe.copy(frame, frameHead);
  frame[frameHead + safe.length] = frameEnd;
  return Buffer.concat([frame, received.subarray(after + 1)]);
}

/**
 * A content header's payload rewritten where amqplib could not read its properties safely, else
 * undefined. Past the header table the properties are kept; if they are damaged too, only the
 * marking table is left.
 */
export function safeProperties(payload: Buffer): Buffer | undefined {
  // Without its body size the frame is the server's own damage (a publisher's could not have been
  // routed): amqplib reports that. Without the property flags, the properties are the sender's.
  if (payload.length < propertiesAt) return undefined;
  const flags = payload.length < propertiesAt + 2 ? 0 : payload.readUInt16BE(propertiesAt);
  let offset = payload.length < propertiesAt + 2 ? Number.NaN : propertiesAt + 2;
  if (flags & 0x8000) offset = pastShortString(payload, offset);
  if (flags & 0x4000) offset = pastShortString(payload, offset);
  const tableAt = offset;
  let reason: string | undefined;
  if (flags & 0x2000 && offset + 4 <= payload.length) {
    const end = offset + 4 + payload.readUInt32BE(offset);
    if (end > payload.length) {
      reason = "the header table runs past the message's properties: fix the sender";
    } else {
      const refusal = checkTable(payload, offset + 4, end, maxHeaderNesting);
      if (refusal?.kind === "nesting") reason = nestingRefusal(refusal.entry ?? "");
      else if (refusal !== undefined) {
        reason = `the header table is not well-formed AMQP (${refusal.detail}): fix the sender`;
      }
    }
    offset = end;
  } else if (flags & 0x2000) {
    offset = Number.NaN;
  }
  const tableEnd = offset;
  for (const [flag, size] of afterHeaders) {
    if (!(flags & flag)) continue;
    offset = size > 0 ? offset + size : pastShortString(payload, offset);
  }
  const damaged = !(offset <= payload.length);
  if (!damaged) {
    if (reason === undefined) return undefined;
    return Buffer.concat([
      payload.subarray(0, propertiesAt),
      flagsOf(flags | 0x2000),
      payload.subarray(propertiesAt + 2, tableAt),
      markingTable(reason),
      payload.subarray(tableEnd),
    ]);
  }
  const text = reason ?? "the message's properties are not well-formed AMQP: fix the sender";
  return Buffer.concat([payload.subarray(0, propertiesAt), flagsOf(0x2000), markingTable(text)]);
}

/** Where the short string at `offset` ends (NaN once the properties ran out). */
function pastShortString(payload: Buffer, offset: number): number {
  return offset < payload.length ? offset + 1 + (payload[offset] as number) : Number.NaN;
}

function flagsOf(flags: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(flags);
  return bytes;
}

/** A header table of one long-string entry, `unreadableHeaders`, holding `text`. */
function markingTable(text: string): Buffer {
  const name = Buffer.from(unreadableHeaders);
  const value = Buffer.from(text);
  const table = Buffer.alloc(4 + 1 + name.length + 1 + 4 + value.length);
  let at = table.writeUInt32BE(table.length - 4, 0);
  at = table.writeUInt8(name.length, at);
  at += name.copy(table, at);
  at = table.writeUInt8("S".charCodeAt(0), at);
  at = table.writeUInt32BE(value.length, at);
  value.copy(table, at);
  return table;
}

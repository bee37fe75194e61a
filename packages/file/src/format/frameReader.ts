import { readBeacon } from "./beacon.js";
import { asciiString, type ByteWindow, viewOf, windowEnd } from "./bytes.js";
import { CR, MAX_TIMESTAMP_MS } from "./constants.js";
import { crc16Cdma2000 } from "./crc.js";
import { StreamFileError } from "./errors.js";
import { FRAME_OVERHEAD } from "./frame.js";
import { isValidStreamKey } from "./streamKey.js";
import type { Beacon, DecodedMessage } from "./types.js";

export interface ReadOptions {
  readonly beaconInterval: number;
  /** Also check what upstream writes but never reads (CR bytes, beacon `remaining`). */
  readonly strict: boolean;
  /** A length field above this is treated as corruption rather than waited for. */
  readonly maxPayloadBytes: number;
}

/** The next unit at a position: a beacon, a frame (with the beacons spliced into it), or a wait. */
export type UnitRead =
  | { readonly kind: "beacon"; readonly beacon: Beacon; readonly end: number }
  | {
      readonly kind: "frame";
      readonly message: DecodedMessage;
      /** Beacons that sat inside the frame, in file order. */
      readonly beacons: readonly Beacon[];
      readonly end: number;
    }
  /** The window must reach file offset `until` before the unit can be read. */
  | { readonly kind: "need"; readonly until: number };

interface Spliced {
  readonly beacon: Beacon;
  /** Frame bytes that came before this beacon. */
  readonly before: number;
}

type Gathered =
  | {
      readonly ok: true;
      readonly bytes: Uint8Array;
      readonly end: number;
      readonly spliced: Spliced[];
    }
  | { readonly ok: false; readonly until: number };

/**
 * Collects `length` frame bytes starting at `pos`, stepping over any beacon sitting at an interval
 * boundary on the way. A beacon right after the last byte is not read: it belongs after the frame.
 */
function gather(win: ByteWindow, pos: number, length: number, opts: ReadOptions): Gathered {
  const interval = opts.beaconInterval;
  const boundary = (Math.floor(pos / interval) + 1) * interval;
  const available = windowEnd(win);
  if (pos + length <= boundary) {
    // The common case: the whole run sits between two beacons, so no copy is needed.
    if (pos + length > available) return { ok: false, until: pos + length };
    const from = pos - win.start;
    return {
      ok: true,
      bytes: win.bytes.subarray(from, from + length),
      end: pos + length,
      spliced: [],
    };
  }
  const out = new Uint8Array(length);
  const spliced: Spliced[] = [];
  let at = pos;
  let got = 0;
  while (got < length) {
    const next = (Math.floor(at / interval) + 1) * interval;
    const take = Math.min(length - got, next - at);
    // The frame needs at least `length` bytes past `pos`, beacons aside: asking for that much
    // at once keeps a caller feeding small chunks from retrying at every beacon.
    if (at + take > available) return { ok: false, until: Math.max(at + take, pos + length) };
    out.set(win.bytes.subarray(at - win.start, at - win.start + take), got);
    got += take;
    at += take;
    if (got < length) {
      const read = readBeacon(win, at, interval, opts.strict);
      if (read.kind === "corrupt") {
        throw corruptUnit(`Frame is split by a damaged beacon at byte ${at} (${read.reason})`, pos);
      }
      if (read.kind === "need") return { ok: false, until: read.until };
      spliced.push({ beacon: read.beacon, before: got });
      at += read.beacon.size;
    }
  }
  return { ok: true, bytes: out, end: at, spliced };
}

function corruptUnit(what: string, offset: number): StreamFileError {
  return new StreamFileError(
    "FILE_CORRUPT",
    `${what}; every message before it is intact, readers stop here`,
    offset,
  );
}

function readFrame(win: ByteWindow, pos: number, opts: ReadOptions): UnitRead {
  const first = gather(win, pos, 1, opts);
  if (!first.ok) return { kind: "need", until: first.until };
  const keyLength = first.bytes[0]!;
  const headLength = 1 + keyLength + 28;
  const head = gather(win, pos, headLength, opts);
  if (!head.ok) return { kind: "need", until: head.until };
  const streamKey = asciiString(head.bytes, 1, 1 + keyLength);
  if (!isValidStreamKey(streamKey)) throw corruptUnit("Frame has an invalid stream key", pos);
  const headView = viewOf(head.bytes);
  const timestamp = headView.getBigUint64(1 + keyLength + 16);
  if (timestamp > BigInt(MAX_TIMESTAMP_MS)) {
    throw corruptUnit("Frame timestamp is past year 9999", pos);
  }
  const payloadLength = headView.getUint32(1 + keyLength + 24);
  if (payloadLength > opts.maxPayloadBytes) {
    throw corruptUnit(
      `Frame payload length ${payloadLength} is over the limit of ${opts.maxPayloadBytes} bytes`,
      pos,
    );
  }
  const total = FRAME_OVERHEAD + keyLength + payloadLength;
  const all = gather(win, pos, total, opts);
  if (!all.ok) return { kind: "need", until: all.until };
  const bytes = all.bytes;
  const payload = bytes.subarray(headLength, headLength + payloadLength);
  const view = viewOf(bytes);
  const checksum = view.getUint16(headLength + payloadLength);
  const computed = crc16Cdma2000(payload);
  if (checksum !== computed) {
    throw corruptUnit(
      `Frame checksum mismatch (stored 0x${checksum.toString(16)}, computed 0x${computed.toString(16)})`,
      pos,
    );
  }
  if (opts.strict) {
    if (bytes[total - 1] !== CR) throw corruptUnit("Frame does not end with 0x0D", pos);
    for (const s of all.spliced) {
      if (s.beacon.remaining !== total - s.before) {
        throw corruptUnit(
          `Beacon at byte ${s.beacon.offset} says ${s.beacon.remaining} frame bytes follow, but ${total - s.before} do`,
          pos,
        );
      }
    }
  }
  return {
    kind: "frame",
    message: {
      streamKey,
      shard: headView.getBigUint64(1 + keyLength),
      seq: headView.getBigUint64(1 + keyLength + 8),
      timestamp: Number(timestamp),
      payload,
      checksum,
      offset: pos,
      end: all.end,
    },
    beacons: all.spliced.map((s) => s.beacon),
    end: all.end,
  };
}

/**
 * Reads the unit starting at file offset `pos`: the beacon when `pos` is an interval boundary,
 * else a frame. Throws `FILE_CORRUPT` (offset = `pos`) for damage; a short window is not damage
 * here, only the caller knows whether more bytes can come.
 */
export function readUnit(win: ByteWindow, pos: number, opts: ReadOptions): UnitRead {
  if (pos > 0 && pos % opts.beaconInterval === 0) {
    const read = readBeacon(win, pos, opts.beaconInterval, opts.strict);
    if (read.kind === "corrupt") throw corruptUnit(`Damaged beacon: ${read.reason}`, pos);
    if (read.kind === "need") return read;
    return { kind: "beacon", beacon: read.beacon, end: pos + read.beacon.size };
  }
  return readFrame(win, pos, opts);
}

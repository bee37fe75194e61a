import type { RustStreamError } from "@ruststream/core";
import { readBeacon } from "./beacon.js";
import { asciiString, type ByteWindow, viewOf, windowEnd } from "./bytes.js";
import { CR, MAX_TIMESTAMP_MS } from "./constants.js";
import { CRC16_INIT, crc16Update } from "./crc.js";
import { fileError } from "./errors.js";
import { FRAME_OVERHEAD } from "./frame.js";
import { isValidStreamKey } from "./streamKey.js";
import type { Beacon, DecodedMessage } from "./types.js";

export interface ReadOptions {
  readonly beaconInterval: number;
  /** Also check what upstream writes but never reads (CR bytes, beacon `remaining`). */
  readonly strict: boolean;
  /** A length field above this is refused (`FRAME_TOO_LARGE`) rather than waited for. */
  readonly maxMessageBytes: number;
  /**
   * Where the data ends for sure (a file's size, when scanning it), if known: a frame over the
   * limit that would run past it cannot be whole, so it reads as cut short, not as too large.
   */
  readonly knownEnd?: number;
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
  /**
   * The window must reach file offset `until` before more of the unit can be read (or checked);
   * `whole`, when the unit's size is known, is the offset it cannot end before.
   */
  | { readonly kind: "need"; readonly until: number; readonly whole?: number };

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
 *
 * The beacons are read first, each as soon as its bytes are in the window, and checked (in strict
 * mode, against `total`, the frame's size, when it is known): so damage shows as soon as its bytes
 * exist, however they arrived, whole or in pieces. Only once every byte of the run is there is it
 * copied out: a length read from damaged bytes never allocates what it claims.
 */
function gather(
  win: ByteWindow,
  pos: number,
  length: number,
  opts: ReadOptions,
  total?: number,
): Gathered {
  const interval = opts.beaconInterval;
  const available = windowEnd(win);
  if (pos + length <= (Math.floor(pos / interval) + 1) * interval) {
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
  const spliced: Spliced[] = [];
  let at = pos;
  let got = 0;
  for (;;) {
    const next = (Math.floor(at / interval) + 1) * interval;
    const take = Math.min(length - got, next - at);
    // Asked for up to the next beacon only: the verdict on it must not wait for the whole run.
    if (at + take > available) return { ok: false, until: at + take };
    got += take;
    at += take;
    if (got === length) break;
    const read = readBeacon(win, at, interval, opts.strict);
    if (read.kind === "corrupt") {
      throw corruptUnit(`Frame is split by a damaged beacon at byte ${at} (${read.reason})`, pos);
    }
    if (read.kind === "need") return { ok: false, until: read.until };
    const { remaining } = read.beacon;
    if (opts.strict && total !== undefined && remaining !== total - got) {
      throw corruptUnit(
        `Beacon at byte ${at} says ${remaining} frame bytes follow, but the frame's length says ${total - got}`,
        pos,
      );
    }
    spliced.push({ beacon: read.beacon, before: got });
    at += read.beacon.size;
  }
  const out = new Uint8Array(length);
  let from = pos;
  let filled = 0;
  for (const s of spliced) {
    out.set(win.bytes.subarray(from - win.start, s.beacon.offset - win.start), filled);
    filled = s.before;
    from = s.beacon.offset + s.beacon.size;
  }
  out.set(win.bytes.subarray(from - win.start, at - win.start), filled);
  return { ok: true, bytes: out, end: at, spliced };
}

function corruptUnit(what: string, offset: number): RustStreamError {
  return fileError(
    "FILE_CORRUPT",
    `${what}; every message before it is intact, readers stop here`,
    offset,
  );
}

function readFrame(win: ByteWindow, pos: number, opts: ReadOptions): UnitRead {
  // The common case, nearly every frame of a replay: the whole frame sits in the window before the
  // next beacon, so it is read in place, with no copy and no gathering.
  const limit = Math.min(
    windowEnd(win),
    (Math.floor(pos / opts.beaconInterval) + 1) * opts.beaconInterval,
  );
  const at = pos - win.start;
  const bytes = win.bytes;
  if (pos + 1 <= limit) {
    const headLength = 1 + bytes[at]! + 28;
    if (pos + headLength <= limit) {
      const total = FRAME_OVERHEAD + bytes[at]! + u32(bytes, at + headLength - 4);
      if (pos + total <= limit) return decodeFrame(bytes, at, pos, pos + total, NO_SPLICES, opts);
    }
  }
  const first = gather(win, pos, 1, opts);
  if (!first.ok) return { kind: "need", until: first.until };
  const headLength = 1 + first.bytes[0]! + 28;
  const head = gather(win, pos, headLength, opts);
  if (!head.ok) return { kind: "need", until: head.until };
  const payloadLength = u32(head.bytes, headLength - 4);
  const total = FRAME_OVERHEAD + head.bytes[0]! + payloadLength;
  if (payloadLength > opts.maxMessageBytes && pos + total > (opts.knownEnd ?? Infinity)) {
    return { kind: "need", until: pos + total, whole: pos + total };
  }
  checkHead(head.bytes, 0, pos, opts);
  const all = gather(win, pos, total, opts, total);
  if (!all.ok) return { kind: "need", until: all.until, whole: pos + total };
  return decodeFrame(all.bytes, 0, pos, all.end, all.spliced, opts);
}

const NO_SPLICES: readonly Spliced[] = [];

function u32(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0
  );
}

/** Checks a frame's head (key, timestamp, payload length) before its payload is waited for. */
function checkHead(bytes: Uint8Array, at: number, pos: number, opts: ReadOptions): string {
  const keyLength = bytes[at]!;
  const streamKey = asciiString(bytes, at + 1, at + 1 + keyLength);
  if (!isValidStreamKey(streamKey)) throw corruptUnit("Frame has an invalid stream key", pos);
  const t = at + 1 + keyLength + 16;
  // Both halves as numbers: the limit is far below 2^53, and no bigint is made per frame.
  if (u32(bytes, t) * 2 ** 32 + u32(bytes, t + 4) > MAX_TIMESTAMP_MS) {
    throw corruptUnit("Frame timestamp is past year 9999", pos);
  }
  const payloadLength = u32(bytes, t + 8);
  if (payloadLength > opts.maxMessageBytes) {
    throw fileError(
      "FRAME_TOO_LARGE",
      `Frame declares a payload of ${payloadLength} bytes, over the reader's limit of ${opts.maxMessageBytes} bytes: raise maxMessageBytes if the file holds messages that large (a damaged length reads the same); every message before it is intact, readers stop here`,
      pos,
    );
  }
  return streamKey;
}

/**
 * Decodes the frame whose `total` bytes (beacons taken out) start at `bytes[at]`; `pos` and `end`
 * are its file offsets, beacons included.
 */
function decodeFrame(
  bytes: Uint8Array,
  at: number,
  pos: number,
  end: number,
  spliced: readonly Spliced[],
  opts: ReadOptions,
): UnitRead {
  const streamKey = checkHead(bytes, at, pos, opts);
  const keyLength = bytes[at]!;
  const headLength = 1 + keyLength + 28;
  const payloadLength = u32(bytes, at + headLength - 4);
  const total = FRAME_OVERHEAD + keyLength + payloadLength;
  const payloadAt = at + headLength;
  const checksum = (bytes[payloadAt + payloadLength]! << 8) | bytes[payloadAt + payloadLength + 1]!;
  const computed = crc16Update(CRC16_INIT, bytes, payloadAt, payloadAt + payloadLength);
  if (checksum !== computed) {
    throw corruptUnit(
      `Frame checksum mismatch (stored 0x${checksum.toString(16)}, computed 0x${computed.toString(16)})`,
      pos,
    );
  }
  // Each beacon's `remaining` was checked as it was read (gather).
  if (opts.strict && bytes[at + total - 1] !== CR) {
    throw corruptUnit("Frame does not end with 0x0D", pos);
  }
  const view = viewOf(bytes);
  const t = at + 1 + keyLength;
  return {
    kind: "frame",
    message: {
      streamKey,
      shard: view.getBigUint64(t),
      seq: view.getBigUint64(t + 8),
      timestamp: u32(bytes, t + 16) * 2 ** 32 + u32(bytes, t + 20),
      payload: bytes.subarray(payloadAt, payloadAt + payloadLength),
      checksum,
      offset: pos,
      end,
    },
    beacons: spliced.length === 0 ? NO_BEACONS : spliced.map((s) => s.beacon),
    end,
  };
}

const NO_BEACONS: readonly Beacon[] = [];

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

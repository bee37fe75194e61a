import type { RustStreamError } from "@ruststream/core";
import { readMark } from "../transactionMark.js";
import { readBeacon } from "./beacon.js";
import { HEADER_SIZE, MAX_PAYLOAD_LIMIT } from "./constants.js";
import { CRC16_INIT, runningChecksumUpdate } from "./crc.js";
import { isEndOfStream } from "./decoder.js";
import { fileErrorDetail } from "./errors.js";
import type { ReadOptions } from "./frameReader.js";
import { decodeHeader } from "./header.js";
import type { RandomAccessReader } from "./reader.js";
import { alignAfterBeacon, scanUnits } from "./scan.js";
import type { DecodedMessage, FileHeader, StreamId, StreamState } from "./types.js";

export interface ResumeOptions {
  readonly strict?: boolean;
  readonly maxMessageBytes?: number;
}

/** Where a writer continues an existing file. */
export interface ResumePoint {
  readonly header: FileHeader;
  /** Just past the last complete frame that is not the end-of-stream marker. */
  readonly offset: number;
  /** True when that frame is followed by an end-of-stream marker (the writer overwrites it). */
  readonly endedWithEos: boolean;
  /**
   * Bytes from `offset` to the end of the file (an end-of-stream marker, a torn tail). Upstream
   * leaves them in place; truncate the file to `offset` so no stale bytes outlive a short append.
   */
  readonly staleBytes: number;
  /** Why the tail was cut off, when it was torn or corrupt rather than cleanly ended. */
  readonly damage: RustStreamError | undefined;
}

export interface RecoveredStream extends StreamId {
  readonly state: StreamState;
  /** Payload checksum of the stream's last frame, when the scan saw it (upstream seeds with it). */
  readonly lastChecksum: number | undefined;
}

function readOptions(
  header: FileHeader,
  options: ResumeOptions,
  reader: RandomAccessReader,
): ReadOptions {
  return {
    beaconInterval: header.beaconInterval,
    strict: options.strict ?? true,
    maxMessageBytes: Math.min(options.maxMessageBytes ?? MAX_PAYLOAD_LIMIT, MAX_PAYLOAD_LIMIT),
    knownEnd: reader.size,
  };
}

/**
 * Finds where to continue writing, reading only the tail: it scans from the last beacon and steps
 * back one interval at a time only while the scanned part holds no complete frame. Returns
 * `undefined` for an empty file (start a new one); throws for a file that is not `.ss` or whose
 * header is torn, and (`FRAME_TOO_LARGE`) for a tail holding a whole frame over `maxMessageBytes`,
 * which it will not cut.
 *
 * A RustStream transaction whose last frame never made it (a crash mid-commit) is cut whole: its
 * frames that did make it are part of the tail to cut, so the point is where the transaction began
 * (wire/transactionMark.ts). Readers never hand them out, and a writer resuming there writes over
 * them.
 */
export function findResumePoint(
  reader: RandomAccessReader,
  options: ResumeOptions = {},
): ResumePoint | undefined {
  if (reader.size === 0) return undefined;
  const header = decodeHeader(reader.read(0, HEADER_SIZE), options.strict ?? true);
  const opts = readOptions(header, options, reader);
  const tail = lastFrame(reader, opts);
  const open = tail.last === undefined ? undefined : openTransactionStart(reader, tail.last, opts);
  const found =
    open === undefined ? tail : lastFrame(cutAt(reader, open), { ...opts, knownEnd: open });
  const { offset, endedWithEos } = found;
  // A torn frame after the open transaction is still why the tail goes.
  const damage = found.damage ?? tail.damage;
  return { header, offset, endedWithEos, staleBytes: reader.size - offset, damage };
}

interface LastFrame {
  readonly offset: number;
  readonly endedWithEos: boolean;
  readonly damage: RustStreamError | undefined;
  /** The last complete frame, when the scan read it (not when an end-of-stream marker follows it). */
  readonly last: DecodedMessage | undefined;
}

/** Just past the last complete frame of `reader`'s bytes that is not the end-of-stream marker. */
function lastFrame(reader: RandomAccessReader, opts: ReadOptions): LastFrame {
  const interval = opts.beaconInterval;
  const size = reader.size;

  // Regions are scanned from the top down; `limit` is where the region above began.
  let limit = size;
  let damage: RustStreamError | undefined;
  for (let k = Math.floor((size - 1) / interval); k >= 0; k--) {
    const start = k === 0 ? HEADER_SIZE : alignAfterBeacon(reader, k * interval, opts);
    if (start === undefined || start >= limit) continue;
    const seen: { last: DecodedMessage | undefined; eosAt: number | undefined } = {
      last: undefined,
      eosAt: undefined,
    };
    const stop = scanUnits(reader, start, limit, opts, (unit) => {
      if (unit.kind !== "frame") return false;
      if (isEndOfStream(unit.message)) {
        // Readers stop at the marker, so nothing after it counts either.
        seen.eosAt = unit.message.offset;
        return true;
      }
      seen.last = unit.message;
      return false;
    });
    if (stop.kind === "damaged") {
      // A whole frame over the limit may be a real message (a writer with a higher limit wrote
      // it): cutting there would lose it and everything after it, so the file is left as it is.
      if (fileErrorDetail(stop.error)?.code === "FRAME_TOO_LARGE") throw stop.error;
      damage ??= stop.error;
    }
    if (seen.last !== undefined) {
      const endedWithEos = seen.eosAt !== undefined;
      return { offset: seen.last.end, endedWithEos, damage, last: seen.last };
    }
    // The end-of-stream marker is this region's first frame: the frame before it ends where it starts.
    if (seen.eosAt !== undefined) {
      return {
        offset: offsetBefore(reader, opts, seen.eosAt),
        endedWithEos: true,
        damage,
        last: undefined,
      };
    }
    limit = start;
  }
  return { offset: HEADER_SIZE, endedWithEos: false, damage, last: undefined };
}

/**
 * Where the transaction `last` belongs to begins, when it was left open: `last` is not its last
 * frame, and every frame from the transaction's start up to `last` is one of it, in order, with
 * nothing else between. A mark that does not hold up so (a header copied onto another message, a
 * start that is no frame) cuts nothing.
 */
function openTransactionStart(
  reader: RandomAccessReader,
  last: DecodedMessage,
  opts: ReadOptions,
): number | undefined {
  const mark = readMark(last.payload);
  if (mark === undefined || mark.index >= mark.count || mark.start > last.offset) return undefined;
  let next = 1;
  const stop = scanUnits(reader, mark.start, last.end, opts, (unit) => {
    if (unit.kind !== "frame") return false;
    const m = readMark(unit.message.payload);
    if (m?.start !== mark.start || m.count !== mark.count || m.index !== next) return true;
    next++;
    return false;
  });
  return stop.kind === "limit" && next === mark.index + 1 ? mark.start : undefined;
}

/** The file as if it ended at `end`. */
function cutAt(reader: RandomAccessReader, end: number): RandomAccessReader {
  return {
    size: end,
    read: (offset, length) => reader.read(offset, Math.max(0, Math.min(length, end - offset))),
  };
}

/** The end-of-stream marker starts at `eosStart`; the last frame before it ends exactly there. */
function offsetBefore(reader: RandomAccessReader, opts: ReadOptions, eosStart: number): number {
  // Frames are contiguous, so whatever precedes the marker ends where it starts, unless a beacon
  // sits in between (the marker starting right after one): then the frame ended at the boundary.
  const boundary = Math.floor(eosStart / opts.beaconInterval) * opts.beaconInterval;
  if (boundary >= HEADER_SIZE && boundary < eosStart) {
    const read = readBeacon(
      { bytes: reader.read(boundary, eosStart - boundary), start: boundary },
      boundary,
      opts.beaconInterval,
      opts.strict,
    );
    if (read.kind === "beacon" && boundary + read.beacon.size === eosStart) return boundary;
  }
  return eosStart;
}

function streamKeyOf(s: StreamId): string {
  return `${s.shard}/${s.streamKey}`;
}

interface Tracking {
  id: StreamId;
  /** Frames of this stream starting at or after this offset are folded in. */
  from: number;
  state: StreamState | undefined;
  lastChecksum: number | undefined;
}

/**
 * Recovers the writer state of the given streams as of `point.offset`: walks beacons back from the
 * end to the latest marker of each stream, then folds in that stream's frames after it. Without a
 * list, or when some stream has no marker, it falls back to scanning from the first frame.
 * Streams never written come back absent.
 */
export function recoverStreams(
  reader: RandomAccessReader,
  point: ResumePoint,
  streams?: readonly StreamId[],
  options: ResumeOptions = {},
): RecoveredStream[] {
  const opts = readOptions(point.header, options, reader);
  const interval = opts.beaconInterval;
  const tracked = new Map<string, Tracking>();
  for (const id of streams ?? []) {
    tracked.set(streamKeyOf(id), {
      id,
      from: HEADER_SIZE,
      state: undefined,
      lastChecksum: undefined,
    });
  }
  let scanFrom = HEADER_SIZE;
  if (streams !== undefined && streams.length > 0) {
    let missing = tracked.size;
    // Only beacons before the resume offset describe frames that are kept.
    for (let k = Math.floor((point.offset - 1) / interval); k >= 1 && missing > 0; k--) {
      const at = k * interval;
      const bytes = reader.read(at, Math.min(interval, point.offset - at));
      const read = readBeacon({ bytes, start: at }, at, interval, opts.strict);
      if (read.kind !== "beacon") continue;
      for (const marker of read.beacon.markers) {
        const t = tracked.get(streamKeyOf(marker));
        if (!t || t.state !== undefined) continue;
        const from = alignAfterBeacon(reader, at, opts);
        if (from === undefined) continue;
        t.state = {
          seq: marker.seq,
          timestamp: marker.timestamp,
          runningChecksum: marker.runningChecksum,
        };
        t.from = from;
        missing--;
      }
    }
    scanFrom = missing > 0 ? HEADER_SIZE : Math.min(...[...tracked.values()].map((t) => t.from));
  }

  const all = streams === undefined;
  const stop = scanUnits(reader, scanFrom, point.offset, opts, (unit) => {
    if (unit.kind !== "frame") return false;
    const m = unit.message;
    const key = streamKeyOf(m);
    let t = tracked.get(key);
    if (!t && all && !isEndOfStream(m)) {
      t = {
        id: { streamKey: m.streamKey, shard: m.shard },
        from: HEADER_SIZE,
        state: undefined,
        lastChecksum: undefined,
      };
      tracked.set(key, t);
    }
    if (!t || m.offset < t.from) return false;
    const s = t.state;
    t.state = s
      ? {
          seq: m.seq > s.seq ? m.seq : s.seq,
          timestamp: Math.max(m.timestamp, s.timestamp),
          runningChecksum: runningChecksumUpdate(s.runningChecksum, m.checksum),
        }
      : {
          seq: m.seq,
          timestamp: m.timestamp,
          runningChecksum: runningChecksumUpdate(CRC16_INIT, m.checksum),
        };
    t.lastChecksum = m.checksum;
    return false;
  });
  if (stop.kind === "damaged") throw stop.error;

  const out: RecoveredStream[] = [];
  for (const t of tracked.values()) {
    if (t.state) out.push({ ...t.id, state: t.state, lastChecksum: t.lastChecksum });
  }
  return out;
}

import { asciiString, type ByteWindow, viewOf, windowEnd, writeAscii } from "./bytes.js";
import { CR, MAX_TIMESTAMP_MS } from "./constants.js";
import { isValidStreamKey } from "./streamKey.js";
import type { Beacon, Marker } from "./types.js";

/** CR, U32 remaining, U8 count, ..., CR. */
export const BEACON_OVERHEAD = 7;
/** Key length byte and key, shard, seq, timestamp, running checksum. */
export const MARKER_OVERHEAD = 1 + 24 + 2;
const MARKER_MAX_SIZE = MARKER_OVERHEAD + 255;

/** Upstream sizes beacons for the worst case key length, then uses only half of that room. */
export function maxMarkers(space: number): number {
  if (space < BEACON_OVERHEAD) return 0;
  return Math.min(255, Math.floor((space - BEACON_OVERHEAD) / MARKER_MAX_SIZE));
}

/** How many stream markers each beacon carries for a given beacon interval. */
export function markersPerBeacon(beaconInterval: number): number {
  return Math.floor(maxMarkers(beaconInterval) / 2);
}

export function beaconSize(markers: readonly Marker[]): number {
  let size = BEACON_OVERHEAD;
  for (const m of markers) size += MARKER_OVERHEAD + m.streamKey.length;
  return size;
}

export function encodeBeacon(remaining: number, markers: readonly Marker[]): Uint8Array {
  const out = new Uint8Array(beaconSize(markers));
  const view = viewOf(out);
  out[0] = CR;
  view.setUint32(1, remaining);
  out[5] = markers.length;
  let at = 6;
  for (const m of markers) {
    out[at] = m.streamKey.length;
    writeAscii(out, at + 1, m.streamKey);
    at += 1 + m.streamKey.length;
    view.setBigUint64(at, m.shard);
    view.setBigUint64(at + 8, m.seq);
    view.setBigUint64(at + 16, BigInt(m.timestamp));
    view.setUint16(at + 24, m.runningChecksum);
    at += 26;
  }
  out[at] = CR;
  return out;
}

/**
 * A beacon; or the file offset the window must reach before one can be read; or why the bytes
 * there cannot be a beacon (the caller knows which unit that damages, so it builds the error).
 */
export type BeaconRead =
  | { readonly kind: "beacon"; readonly beacon: Beacon }
  | { readonly kind: "need"; readonly until: number }
  | { readonly kind: "corrupt"; readonly reason: string };

/**
 * Reads the beacon at file offset `offset` (a multiple of the interval). Upstream checks nothing
 * but the stream keys; `strict` also checks the CR bytes and that the beacon fits its interval,
 * which every conforming writer guarantees and which catches garbage early.
 */
export function readBeacon(
  win: ByteWindow,
  offset: number,
  beaconInterval: number,
  strict: boolean,
): BeaconRead {
  const { bytes } = win;
  const end = windowEnd(win);
  if (offset + 6 > end) return { kind: "need", until: offset + 6 };
  const view = viewOf(bytes);
  let at = offset - win.start;
  if (strict && bytes[at] !== CR)
    return { kind: "corrupt", reason: "beacon does not start with 0x0D" };
  const remaining = view.getUint32(at + 1);
  const count = bytes[at + 5]!;
  at += 6;
  const markers: Marker[] = [];
  for (let i = 0; i < count; i++) {
    const keyLength = bytes[at];
    if (keyLength === undefined) return { kind: "need", until: win.start + at + 1 };
    if (at + MARKER_OVERHEAD + keyLength > bytes.length) {
      return { kind: "need", until: win.start + at + MARKER_OVERHEAD + keyLength };
    }
    const streamKey = asciiString(bytes, at + 1, at + 1 + keyLength);
    if (!isValidStreamKey(streamKey)) {
      return { kind: "corrupt", reason: "beacon marker has an invalid stream key" };
    }
    at += 1 + keyLength;
    const timestamp = view.getBigUint64(at + 16);
    if (timestamp > BigInt(MAX_TIMESTAMP_MS)) {
      return { kind: "corrupt", reason: "beacon marker timestamp is past year 9999" };
    }
    markers.push({
      streamKey,
      shard: view.getBigUint64(at),
      seq: view.getBigUint64(at + 8),
      timestamp: Number(timestamp),
      runningChecksum: view.getUint16(at + 24),
    });
    at += 26;
  }
  if (at >= bytes.length) return { kind: "need", until: win.start + at + 1 };
  if (strict && bytes[at] !== CR)
    return { kind: "corrupt", reason: "beacon does not end with 0x0D" };
  const size = win.start + at + 1 - offset;
  if (strict && size > beaconInterval) {
    return { kind: "corrupt", reason: "beacon is larger than its interval" };
  }
  return {
    kind: "beacon",
    beacon: { offset, index: offset / beaconInterval, remaining, markers, size },
  };
}

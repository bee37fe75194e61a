import { readBeacon } from "./beacon.js";
import { HEADER_SIZE, MAX_PAYLOAD_LIMIT } from "./constants.js";
import type { ReadOptions } from "./frameReader.js";
import type { RandomAccessReader } from "./reader.js";
import { alignAfterBeacon } from "./scan.js";
import type { FileHeader, Marker } from "./types.js";

/** Where a reader wants to start: the first message of a stream at or after a sequence number, or strictly after a time. */
export type LocateTarget = { readonly seq: bigint } | { readonly timestamp: number };

type Verdict = "before" | "after" | "undecided";

/** Whether every frame the target asks for comes after the beacon holding these markers. */
function judge(markers: readonly Marker[], streamKey: string, target: LocateTarget): Verdict {
  let seen = false;
  for (const m of markers) {
    if (m.streamKey !== streamKey) continue;
    seen = true;
    const before = "seq" in target ? m.seq < target.seq : m.timestamp <= target.timestamp;
    if (!before) return "after";
  }
  return seen ? "before" : "undecided";
}

/**
 * The offset to scan forward from to find the first frame of `streamKey` matching `target`,
 * found by bisecting the beacons: it reads O(log n) beacons, never the frames between them. A
 * beacon without a marker for the stream counts as "after", which only ever moves the start
 * earlier, so the answer is always safe (at worst, the first frame of the file).
 */
export function locateStart(
  reader: RandomAccessReader,
  header: FileHeader,
  streamKey: string,
  target: LocateTarget,
  strict = true,
): number {
  const interval = header.beaconInterval;
  const opts: ReadOptions = {
    beaconInterval: interval,
    strict,
    maxMessageBytes: MAX_PAYLOAD_LIMIT,
  };
  let lo = 1;
  let hi = Math.floor((reader.size - 1) / interval);
  let best = 0;
  while (lo <= hi) {
    const k = (lo + hi) >>> 1;
    const at = k * interval;
    const read = readBeacon(
      { bytes: reader.read(at, Math.min(interval, reader.size - at)), start: at },
      at,
      interval,
      strict,
    );
    const verdict =
      read.kind === "beacon" ? judge(read.beacon.markers, streamKey, target) : "after";
    if (verdict === "before") {
      best = k;
      lo = k + 1;
    } else {
      hi = k - 1;
    }
  }
  if (best === 0) return HEADER_SIZE;
  return alignAfterBeacon(reader, best * interval, opts) ?? HEADER_SIZE;
}

import type { RustStreamError } from "@ruststream/core";
import { readBeacon } from "./beacon.js";
import { type ByteWindow, windowEnd } from "./bytes.js";
import { fileError, isFileError } from "./errors.js";
import { type ReadOptions, readUnit, type UnitRead } from "./frameReader.js";
import type { RandomAccessReader } from "./reader.js";

const CHUNK = 1024 * 1024;

export type ScanStop =
  /** Reached `limit` exactly at a unit boundary. */
  | { readonly kind: "limit"; readonly pos: number }
  /** The visitor asked to stop after the unit ending at `pos`. */
  | { readonly kind: "stopped"; readonly pos: number }
  /** The unit at `pos` is incomplete before `limit`, or damaged. */
  | { readonly kind: "damaged"; readonly pos: number; readonly error: RustStreamError };

/**
 * Reads units from `start` to `limit` through a window that grows by chunks, so a scan costs memory
 * in proportion to the largest frame, not the file. `visit` returns true to stop early.
 */
export function scanUnits(
  reader: RandomAccessReader,
  start: number,
  limit: number,
  opts: ReadOptions,
  visit: (unit: Exclude<UnitRead, { kind: "need" }>) => boolean,
): ScanStop {
  let win: ByteWindow = { bytes: new Uint8Array(0), start };
  let pos = start;
  for (;;) {
    if (pos >= limit) return { kind: "limit", pos };
    let unit: UnitRead;
    try {
      unit = readUnit(win, pos, opts);
    } catch (error) {
      if (isFileError(error)) return { kind: "damaged", pos, error };
      throw error;
    }
    if (unit.kind === "need") {
      const have = windowEnd(win);
      // A frame whose length runs past `limit` is cut short whatever lies between: not read.
      if (have >= limit || unit.until > limit || (unit.whole ?? 0) > limit) {
        const error = fileError(
          "FILE_TRUNCATED",
          "A frame or beacon is cut short here (a write interrupted, e.g. by a crash); the messages before it are intact",
          pos,
        );
        return { kind: "damaged", pos, error };
      }
      // The whole frame at once where its size is known (the bytes are in the file, up to
      // `limit`): growing by chunks would copy a large frame's bytes again at every chunk.
      const want = Math.min(limit, Math.max(unit.until, unit.whole ?? 0, have + CHUNK));
      const kept = win.bytes.subarray(pos - win.start);
      const more = reader.read(have, want - have);
      const bytes = new Uint8Array(kept.length + more.length);
      bytes.set(kept, 0);
      bytes.set(more, kept.length);
      win = { bytes, start: pos };
      if (more.length === 0) limit = have;
      continue;
    }
    pos = unit.end;
    if (visit(unit)) return { kind: "stopped", pos };
  }
}

/**
 * From the beacon at `boundary`, skips the tail of the frame it splits, hopping over further
 * beacons if that frame spans several intervals. Returns where the next frame starts, or
 * `undefined` if a beacon is missing or incomplete before `size`.
 */
export function alignAfterBeacon(
  reader: RandomAccessReader,
  boundary: number,
  opts: ReadOptions,
): number | undefined {
  const interval = opts.beaconInterval;
  let at = boundary;
  for (;;) {
    if (at >= reader.size) return undefined;
    const bytes = reader.read(at, Math.min(interval, reader.size - at));
    const read = readBeacon({ bytes, start: at }, at, interval, opts.strict);
    if (read.kind !== "beacon") return undefined;
    const { size, remaining } = read.beacon;
    // Clamped: in lenient mode a damaged beacon may claim more than its interval.
    const skip = Math.max(0, Math.min(remaining, interval - size));
    at += size + skip;
    if (remaining <= skip || at % interval !== 0) return at;
  }
}

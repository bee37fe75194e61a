import { closeSync, openSync } from "node:fs";
import { findResumePoint, recoverStreams } from "../format/resume.js";
import type { StreamState } from "../format/types.js";
import { fileReader } from "./fileReader.js";

/**
 * The state of a stream at the end of the file (its highest sequence number and time), recovered
 * through the beacons; undefined when the stream has no message yet.
 */
export function streamTip(path: string, streamKey: string): StreamState | undefined {
  const fd = openSync(path, "r");
  try {
    const reader = fileReader(fd);
    const point = findResumePoint(reader);
    if (point === undefined) return undefined;
    return recoverStreams(reader, point, [{ streamKey, shard: 0n }])[0]?.state;
  } finally {
    closeSync(fd);
  }
}

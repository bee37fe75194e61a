import { closeSync, openSync } from "node:fs";
import { fileErrorDetail } from "../format/errors.js";
import { findResumePoint, recoverStreams } from "../format/resume.js";
import type { StreamState } from "../format/types.js";
import { fileReader } from "./fileReader.js";

/**
 * The state of a stream at the end of the file (its highest sequence number and time), recovered
 * through the beacons; undefined when the stream has no message yet.
 */
export function streamTip(path: string, streamKey: string): StreamState | undefined {
  try {
    return readTip(path, streamKey);
  } catch (error) {
    // The end is found first, then the stream's frames are read up to it: a file cut in between
    // (seen in the chaos suite's file-truncate, a cut landing as a named consumer opened) reads as
    // a frame cut short. Once more, from the file as it is now; damage that stays is thrown.
    if (fileErrorDetail(error)?.code !== "FILE_TRUNCATED") throw error;
    return readTip(path, streamKey);
  }
}

function readTip(path: string, streamKey: string): StreamState | undefined {
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

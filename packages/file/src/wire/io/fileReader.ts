import { fstatSync, readSync } from "node:fs";
import type { RandomAccessReader } from "../format/reader.js";

/**
 * A synchronous random-access view of an open file, fixed at `size` (the file's current size by
 * default) so recovery never reads bytes another writer is still appending.
 */
export function fileReader(fd: number, size: number = fstatSync(fd).size): RandomAccessReader {
  return {
    size,
    read(offset, length) {
      const want = Math.max(0, Math.min(length, size - offset));
      const buffer = Buffer.allocUnsafeSlow(want);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, buffer, got, want - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return new Uint8Array(buffer.buffer, buffer.byteOffset, got);
    },
  };
}

/**
 * Random access to a file's bytes, synchronous so the recovery code stays pure and testable
 * (a `Uint8Array` in tests, `fs.readSync` on an open descriptor in the broker).
 */
export interface RandomAccessReader {
  readonly size: number;
  /** Bytes `[offset, offset + length)`, fewer only where the file ends. */
  read(offset: number, length: number): Uint8Array;
}

export function bufferReader(bytes: Uint8Array): RandomAccessReader {
  return {
    size: bytes.length,
    read: (offset, length) => bytes.subarray(offset, Math.min(bytes.length, offset + length)),
  };
}

// The one payload every row sees: 512 bytes, distinct per message (the sequence number in its
// first 8 bytes), so a list's LREM compares real values instead of finding identical ones at once.

export const payloadBytes = 512;

const filler = Buffer.alloc(payloadBytes, "ruststream-bench ");

export function payloadOf(sequence: number): Buffer {
  const payload = Buffer.from(filler);
  payload.writeBigUInt64BE(BigInt(sequence), 0);
  return payload;
}

/**
 * A list value or channel message as the package writes it: RustStream's frame with no headers
 * (`u32 BE 0 | payload`), so the broker and the app read exactly the 512 payload bytes.
 */
export function frameOf(sequence: number): Buffer {
  const frame = Buffer.alloc(4 + payloadBytes);
  frame.writeUInt32BE(0, 0);
  payloadOf(sequence).copy(frame, 4);
  return frame;
}

/** The payload inside a frame without headers, as a raw loop that knows the format reads it. */
export function payloadOfFrame(frame: Buffer): Buffer {
  return frame.readUInt32BE(0) === 0 ? frame.subarray(4) : frame;
}

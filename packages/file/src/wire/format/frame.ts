import { viewOf, writeAscii } from "./bytes.js";
import {
  CR,
  DEFAULT_MAX_MESSAGE_BYTES,
  MAX_PAYLOAD_LIMIT,
  MAX_U64,
  SEA_STREAMER_INTERNAL,
} from "./constants.js";
import { crc16Cdma2000 } from "./crc.js";
import { fileError } from "./errors.js";
import { validateTimestamp } from "./header.js";
import { validateStreamKey } from "./streamKey.js";
import type { StreamMessage } from "./types.js";

/** Key length byte, shard, seq, timestamp, payload length, checksum, final CR. */
export const FRAME_OVERHEAD = 1 + 24 + 4 + 2 + 1;

export function frameSize(streamKeyLength: number, payloadLength: number): number {
  return FRAME_OVERHEAD + streamKeyLength + payloadLength;
}

function validateU64(value: bigint, what: string): void {
  if (value < 0n || value > MAX_U64) {
    throw fileError(
      "INVALID_ARGUMENT",
      `${what} ${value} does not fit in an unsigned 64-bit integer`,
    );
  }
}

/**
 * Checks everything that could make a write fail, before a single byte is produced. The internal
 * key is allowed so the end-of-stream frame can go through the same path.
 */
export function validateMessage(
  message: StreamMessage,
  maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
): void {
  if (message.streamKey !== SEA_STREAMER_INTERNAL) validateStreamKey(message.streamKey);
  validateU64(message.shard, "Shard");
  validateU64(message.seq, "Sequence number");
  validateTimestamp(message.timestamp, "Timestamp");
  const limit = Math.min(maxMessageBytes, MAX_PAYLOAD_LIMIT);
  if (message.payload.length > limit) {
    throw fileError(
      "PAYLOAD_TOO_LARGE",
      `Payload of ${message.payload.length} bytes is over the limit of ${limit} bytes: split the message or raise maxMessageBytes (the format caps it at 4 GiB - 1)`,
    );
  }
}

/**
 * Encodes one frame as contiguous bytes, before any beacon is spliced in. Returns the payload
 * checksum too, since the writer's running checksum needs it. `allocate` returns zeroed bytes of
 * the size asked (the encoder passes its `FrameSlab`).
 */
export function encodeFrame(
  message: StreamMessage,
  allocate: (size: number) => Uint8Array = (size) => new Uint8Array(size),
): { bytes: Uint8Array; checksum: number } {
  const key = message.streamKey;
  const payload = message.payload;
  const out = allocate(frameSize(key.length, payload.length));
  const view = viewOf(out);
  out[0] = key.length;
  writeAscii(out, 1, key);
  let at = 1 + key.length;
  view.setBigUint64(at, message.shard);
  view.setBigUint64(at + 8, message.seq);
  view.setBigUint64(at + 16, BigInt(message.timestamp));
  view.setUint32(at + 24, payload.length);
  at += 28;
  out.set(payload, at);
  at += payload.length;
  const checksum = crc16Cdma2000(payload);
  view.setUint16(at, checksum);
  out[at + 2] = CR;
  return { bytes: out, checksum };
}

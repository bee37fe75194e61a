// One entry as it goes on the wire: its payload compressed with the producer's codec, then its SEND
// frame built once (the same bytes go again after a reconnect), checked against the broker's
// max_message_size first by its payload and then whole, since the broker drops the connection on a
// frame over its limit. What fails here fails the entry's sends, never the connection.
import { RustStreamError } from "@ruststream/core";
import { CommandType, CompressionType } from "../commands/enums.js";
import type { MessageMetadata } from "../commands/shapes.js";
import { compress } from "../compression.js";
import { buildPayloadFrame, FRAME_PADDING } from "../frame.js";

/** What the SEND command says of the entry. */
export interface SendFields {
  readonly sequenceId: bigint;
  readonly highestSequenceId: bigint;
  readonly numMessages: number;
  readonly batched: boolean;
}

/** The refusal of a message (or entry) of `size` bytes, over the broker's limit. */
export function tooLarge(size: number, maxMessageSize: number, topic: string): RustStreamError {
  return new RustStreamError(
    "publish-refused",
    `a message of ${size} bytes exceeds the broker's max_message_size of ${maxMessageSize} bytes on ${topic}; it was not sent (the broker would drop the connection)`,
  );
}

/**
 * The payload compressed (`metadata` records the codec and the size before), or the error its
 * sends fail with: a codec that fails (one that did not load, or ZSTD's check of its own output)
 * fails these sends, never the timer that flushed their batch.
 */
export function compressPayload(
  compression: number,
  metadata: MessageMetadata,
  payload: Uint8Array,
): Uint8Array | Error {
  if (compression === CompressionType.NONE) return payload;
  metadata.compression = compression;
  metadata.uncompressedSize = payload.length;
  try {
    return compress(compression, payload);
  } catch (error) {
    return error instanceof Error ? error : new RustStreamError("publish-refused", String(error));
  }
}

/** The entry's SEND frame, or the error its sends fail with (too large, or not encodable). */
export function sendFrame(
  producerId: number,
  send: SendFields,
  metadata: MessageMetadata,
  payloadLength: number,
  writePayload: (frame: Buffer, at: number) => void,
  maxMessageSize: number,
  topic: string,
): Buffer | RustStreamError {
  // The (compressed) payload against the limit, before anything is built.
  if (payloadLength > maxMessageSize) return tooLarge(payloadLength, maxMessageSize, topic);
  let frame: Buffer;
  try {
    frame = buildPayloadFrame(
      {
        type: CommandType.SEND,
        send: {
          producerId,
          sequenceId: send.sequenceId,
          numMessages: send.numMessages,
          ...(send.batched ? { highestSequenceId: send.highestSequenceId } : {}),
        },
      },
      metadata,
      payloadLength,
      writePayload,
    );
  } catch (error) {
    return new RustStreamError("invalid-argument", `cannot encode the message: ${String(error)}`, {
      cause: error,
    });
  }
  // The whole frame against what the broker reads.
  if (frame.length > maxMessageSize + FRAME_PADDING)
    return tooLarge(payloadLength, maxMessageSize, topic);
  return frame;
}

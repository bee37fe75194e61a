// Entries a consumer cannot decode: a checksum that does not match or metadata that cannot be read,
// a frame or a declared size above the max message size, a payload its codec cannot decompress within it, a
// batch that does not add up. Pulsar's Java client acks such an entry with the
// validation error and delivers none of its messages; so does this one where nobody says
// otherwise, but never silently: every one is logged at error, with its message id and why. A
// consumer given an UndecodableHandler (the broker gives one where the subscription declares a
// dead letter) hands the entry over as it arrived and acks it once the handler is done; if the
// handler fails, the entry is redelivered rather than lost.
import type { MessageMetadata } from "./commands/shapes.js";
import type { MessageId } from "./messageId.js";

/**
 * Why an entry could not be decoded: Pulsar's names (`CommandAck.ValidationError`), used as its
 * Java client uses them: a bad checksum or unreadable metadata, an uncompressed size above the max
 * message size, a payload its codec cannot decompress, a batch whose messages do not add up.
 */
export type UndecodableReason =
  | "ChecksumMismatch"
  | "UncompressedSizeCorruption"
  | "DecompressionError"
  | "BatchDeSerializeError";

/** An entry as it arrived, with what went wrong. */
export interface UndecodableEntry {
  /** The topic it came from: a partition's name on a partitioned topic. */
  readonly topic: string;
  readonly subscription: string;
  /** The entry's id (`batchIndex` -1; `batchSize` its message count, 0 when not batched). */
  readonly messageId: MessageId;
  readonly reason: UndecodableReason;
  /** What the check or the codec said. */
  readonly error: string;
  /** Its metadata as read (on a checksum mismatch, not to be trusted). */
  readonly metadata: MessageMetadata;
  /**
   * Its payload as it travelled: compressed, and for a batch the concatenated entries. Empty for
   * an entry whose frame was over the limit: its bytes were skipped as they arrived, never held.
   */
  readonly payload: Uint8Array;
  /** 0 on first delivery; counted by the broker on Shared and Key_Shared subscriptions. */
  readonly redeliveryCount: number;
}

/** Where a consumer's undecodable entries go instead of being acked away. */
export interface UndecodableHandler {
  /** Where they go, for the log line (a dead-letter topic's name). */
  readonly destination: string;
  /** Resolves once the entry is kept there; the consumer acks it then, or redelivers it on a rejection. */
  handle(entry: UndecodableEntry): Promise<void>;
}

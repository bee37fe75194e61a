/**
 * Every failure of the `.ss` codec is a `StreamFileError` with a stable `code`, so callers branch on
 * the code and never on message text. Kept alone in this file: when `@ruststream/core` ships its
 * shared error class this is the single place to swap.
 */
export type StreamFileErrorCode =
  /** The bytes do not start with the SeaStreamer magic `Ss`. */
  | "FILE_NOT_SEASTREAMER"
  /** Magic matched but the format version is not 1. */
  | "FILE_VERSION_UNSUPPORTED"
  /** The data ends inside a header, beacon or frame (typically a crash mid-write). */
  | "FILE_TRUNCATED"
  /** A checksum mismatch or a field no conforming writer produces. */
  | "FILE_CORRUPT"
  | "INVALID_STREAM_KEY"
  | "PAYLOAD_TOO_LARGE"
  /** A header, sequence, shard or timestamp value the format cannot represent. */
  | "INVALID_ARGUMENT"
  /** Another live process holds the file's writer lock. */
  | "FILE_LOCKED"
  /** The producer was ended, closed, or its file failed: open a new one. */
  | "PRODUCER_CLOSED"
  /** The operating system refused a read or write; `cause` says why. */
  | "FILE_IO";

export class StreamFileError extends Error {
  override readonly name = "StreamFileError";
  readonly code: StreamFileErrorCode;
  /** Absolute byte offset in the file where the problem starts, when there is one. */
  readonly offset: number | undefined;

  constructor(code: StreamFileErrorCode, message: string, offset?: number, cause?: unknown) {
    super(
      offset === undefined ? message : `${message} (at byte ${offset})`,
      cause === undefined ? undefined : { cause },
    );
    this.code = code;
    this.offset = offset;
  }
}

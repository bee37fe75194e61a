import { type ErrorCode, isRustStreamError, RustStreamError } from "@ruststream/core";

/**
 * What went wrong in a `.ss` file, finer than core's code. Every failure of the codec, the reader
 * and the writer is core's one error class, {@link RustStreamError}, whose `code` callers branch
 * on; this is its detail, read with {@link fileErrorDetail}, for a caller that must tell a torn
 * file from a corrupt one, or a locked file from a failing disk.
 */
export type FileErrorCode =
  /** The bytes do not start with the SeaStreamer magic `Ss`. */
  | "FILE_NOT_SEASTREAMER"
  /** Magic matched but the format version is not 1. */
  | "FILE_VERSION_UNSUPPORTED"
  /** The data ends inside a header, beacon or frame (typically a crash mid-write). */
  | "FILE_TRUNCATED"
  /** A checksum mismatch or a field no conforming writer produces. */
  | "FILE_CORRUPT"
  /** A frame declares a payload over the reader's `maxMessageBytes` (or the bytes are damaged). */
  | "FRAME_TOO_LARGE"
  | "INVALID_STREAM_KEY"
  | "PAYLOAD_TOO_LARGE"
  /** A header, sequence, shard or timestamp value the format cannot represent. */
  | "INVALID_ARGUMENT"
  /** Another live process holds the file's writer lock. */
  | "FILE_LOCKED"
  /** The producer was ended or closed: open a new one. */
  | "PRODUCER_CLOSED"
  /** The operating system refused a read or write; the error's `cause` says why. */
  | "FILE_IO";

/** The file-level detail of a {@link RustStreamError} raised over a `.ss` file. */
export interface FileErrorDetail {
  readonly code: FileErrorCode;
  /** Absolute byte offset in the file where the problem starts, when there is one. */
  readonly offset: number | undefined;
}

/**
 * Core's code for each file code: what the caller should do about it. Bad input is the caller's
 * to fix (`invalid-argument`, `publish-refused`); damage, a lock held elsewhere and the operating
 * system's refusals are the file failing, as a server fails (`broker-failure`); a producer used
 * after it ended is `closed`, as anything used after shutdown is.
 */
const CORE_CODE: { readonly [C in FileErrorCode]: ErrorCode } = {
  FILE_NOT_SEASTREAMER: "invalid-argument",
  FILE_VERSION_UNSUPPORTED: "invalid-argument",
  FILE_TRUNCATED: "broker-failure",
  FILE_CORRUPT: "broker-failure",
  FRAME_TOO_LARGE: "broker-failure",
  INVALID_STREAM_KEY: "invalid-argument",
  PAYLOAD_TOO_LARGE: "publish-refused",
  INVALID_ARGUMENT: "invalid-argument",
  FILE_LOCKED: "broker-failure",
  PRODUCER_CLOSED: "closed",
  FILE_IO: "broker-failure",
};

// Keyed by `Symbol.for`, as core's marks are: an app that loads this package twice (its ESM and
// its CJS build) reads the detail either copy wrote. A symbol, not a field, so it never collides
// with what core may add to its error.
const detailKey: unique symbol = Symbol.for("@ruststream/file.errorDetail");

interface WithDetail {
  readonly [detailKey]?: FileErrorDetail;
}

function attach(error: RustStreamError, detail: FileErrorDetail): RustStreamError {
  Object.defineProperty(error, detailKey, { value: detail, enumerable: true });
  return error;
}

/**
 * A failure of the `.ss` file: core's error with core's code for `code`, and `code` and `offset`
 * as its detail. The message names the offset too, so a log line says where the damage starts.
 */
export function fileError(
  code: FileErrorCode,
  message: string,
  offset?: number,
  cause?: unknown,
): RustStreamError {
  const error = new RustStreamError(
    CORE_CODE[code],
    offset === undefined ? message : `${message} (at byte ${offset})`,
    cause === undefined ? undefined : { cause },
  );
  return attach(error, Object.freeze({ code, offset }));
}

/**
 * The broker's own error over a file failure: its code and message, `cause` the file's error, and
 * the file's detail carried over, so `fileErrorDetail` answers on what the broker throws too.
 */
export function wrapFileError(code: ErrorCode, message: string, cause: unknown): RustStreamError {
  const error = new RustStreamError(code, message, { cause });
  const detail = fileErrorDetail(cause);
  return detail === undefined ? error : attach(error, detail);
}

/**
 * The file-level detail of an error this package raised (`FILE_CORRUPT` at byte 4096, say), or
 * undefined for any other value. Match on core's code first (`isRustStreamError(error, code)`);
 * this tells apart what one core code covers.
 */
export function fileErrorDetail(error: unknown): FileErrorDetail | undefined {
  if (!isRustStreamError(error)) return undefined;
  return (error as WithDetail)[detailKey];
}

/** Whether `error` is a failure of the file (and not a bug to rethrow): one {@link fileError} made. */
export function isFileError(error: unknown): error is RustStreamError {
  return fileErrorDetail(error) !== undefined;
}

import { errorMark } from "./marks.js";

/**
 * Every failure core and the broker packages raise on purpose. Match on `code`, never on the message:
 * codes are stable across releases, messages are written for people and may improve.
 */
export type ErrorCode =
  /** Used after `shutdown()`: publish, subscribe, pair, settle, seek, request. */
  | "closed"
  /** A delivery was settled a second time. */
  | "already-settled"
  /** A descriptor, policy or position of one broker was handed to another. */
  | "foreign-value"
  /** A configuration or argument the broker cannot work with. */
  | "invalid-argument"
  /** A publish the broker refuses before sending it (too large, a header it cannot carry). */
  | "publish-refused"
  /** A publish option, settle verb or declaration the broker cannot honour. */
  | "unsupported"
  /** A seek to a position that was evicted or never existed. */
  | "unknown-position"
  /** Work on a transaction that has already committed or aborted. */
  | "transaction-ended"
  /** No reply arrived before the request's timeout. */
  | "timeout"
  /** The broker or its server failed; `cause` holds what it said. */
  | "broker-failure";

/** The one error class of RustStream; its message says how to fix what went wrong. */
export class RustStreamError extends Error {
  readonly [errorMark] = true;
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RustStreamError";
    this.code = code;
  }
}

/** True for a {@link RustStreamError} from any copy of core loaded in this process. */
export function isRustStreamError(value: unknown, code?: ErrorCode): value is RustStreamError {
  if (typeof value !== "object" || value === null) return false;
  if ((value as { [errorMark]?: unknown })[errorMark] !== true) return false;
  return code === undefined || (value as RustStreamError).code === code;
}

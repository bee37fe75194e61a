// How the wire client fails: always a RustStreamError from core, with a stable code. A server's
// ERROR or SEND_ERROR becomes `broker-failure` whose cause is a PulsarServerError naming the
// server's code, so callers can tell a busy subscription from a missing topic.
import { RustStreamError } from "@ruststream/core";
import { ServerError, serverErrorName } from "./commands/enums.js";

/** An error the Pulsar broker answered with (ERROR, SEND_ERROR, a failed lookup). */
export class PulsarServerError extends Error {
  override readonly name = "PulsarServerError";
  /** The server's `ServerError` name, e.g. `ConsumerBusy`, `TopicNotFound`. */
  readonly serverError: string;

  constructor(
    readonly code: number,
    serverMessage: string,
  ) {
    super(`${serverErrorName(code)}: ${serverMessage}`);
    this.serverError = serverErrorName(code);
  }
}

/**
 * Bytes from the wire that cannot be decoded: a command, a message's metadata, a batch, a payload
 * its codec cannot decompress within the limits. Every decoder of this client throws this (or its
 * FrameError) and nothing else, whatever the bytes; what the bytes said and why they fail is in the
 * message. To a caller of `decompress` it is an `invalid-argument`; a consumer turns it into an
 * undecodable entry, a connection (for a FrameError) into `broker-failure`.
 */
export class DecodeError extends RustStreamError {
  override readonly name: string = "DecodeError";

  constructor(message: string, options?: { cause?: unknown }) {
    super("invalid-argument", message, options);
  }
}

/** A peer that broke the protocol's rules (a redirect loop, a missing field): retrying cannot help. */
export class ProtocolFailure extends Error {
  override readonly name = "ProtocolFailure";
}

/** Server errors after which the same request may succeed later (the Java client retries these). */
const RETRIABLE = new Set<number>([
  ServerError.ServiceNotReady,
  ServerError.TooManyRequests,
  ServerError.MetadataError,
  ServerError.PersistenceError,
  ServerError.UnknownError,
]);

/** A `broker-failure` wrapping the server's answer. */
export function serverFailure(what: string, code: number, message: string): RustStreamError {
  const cause = new PulsarServerError(code, message);
  return new RustStreamError("broker-failure", `${what}: the broker answered ${cause.message}`, {
    cause,
  });
}

/** The server's error code inside an error this client raised, if it came from the server. */
export function serverErrorOf(error: unknown): number | undefined {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause instanceof PulsarServerError ? cause.code : undefined;
}

/**
 * Whether an operation that failed with `error` is worth retrying: a lost connection, a timeout, or
 * a transient server state. `also` adds codes a caller treats as transient (a reconnecting consumer
 * treats ConsumerBusy so: its previous incarnation may not be gone yet).
 */
export function isRetriable(error: unknown, also: readonly number[] = []): boolean {
  if (!(error instanceof RustStreamError)) return false;
  if (error.code === "timeout") return true;
  if (error.code !== "broker-failure" || error.cause instanceof ProtocolFailure) return false;
  const code = serverErrorOf(error);
  return code === undefined || RETRIABLE.has(code) || also.includes(code);
}

/** The `closed` error for use after close. */
export function closedError(what: string): RustStreamError {
  return new RustStreamError("closed", `${what} is closed; create a new one`);
}

/**
 * The broker closed a producer or consumer (or its connection went) while it was being attached:
 * retriable, since attaching again is what a close asks for.
 */
export function closedWhileAttaching(topic: string): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    `${topic} was closed by the broker while attaching (the topic moved or was unloaded); attaching again`,
  );
}

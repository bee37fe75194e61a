import { RustStreamError } from "../errors.js";

/**
 * A time position's instant, checked where it is given: a `Date` or milliseconds since the epoch,
 * whole and 0 or more. Anything else (an invalid `Date`, a fraction, a negative number) fails
 * `invalid-argument` naming `what`, instead of a seek the server answers with its own error.
 */
export function epochMs(what: string, time: Date | number): number {
  const ms = typeof time === "number" ? time : time.getTime();
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} needs whole milliseconds since the epoch, 0 or more, not ${String(time)}`,
    );
  }
  return ms;
}

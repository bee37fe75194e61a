import { RustStreamError } from "../errors.js";

// What a codec throws for a payload it does not decode: core's error, `invalid-argument` (the bytes
// are the sender's to fix), which the runtime settles by the subscriber's decode policy. One shape
// for every codec, so a log or a dead letter reads the same whichever refused.

/** The payload is not a value of this codec (`what`: why; `at`: the byte offset, where known). */
export function notDecodable(
  codec: string,
  what: string,
  at?: number,
  cause?: unknown,
): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `the payload is not ${codec}: ${what}${at === undefined ? "" : ` (at byte ${at})`}`,
    cause === undefined ? undefined : { cause },
  );
}

/** The payload is past one of the codec's limits, set by `option` on `factory`. */
export function overLimit(
  codec: string,
  factory: string,
  what: string,
  option: string,
  limit: number,
  at: number,
): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `the payload is refused by the ${codec} codec's limits: ${what}, over the limit of ${limit} (at byte ${at}); raise ${option} with ${factory}({ ${option} }) if such messages are expected`,
  );
}

/** A limit as a factory takes it: a whole number, 1 or more. */
export function checkedLimit(factory: string, name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RustStreamError(
      "invalid-argument",
      `${factory}: ${name} ${value} is not a whole number of 1 or more`,
    );
  }
  return value;
}

import { RustStreamError } from "../errors.js";

/**
 * A count or a duration option checked once, where it is given: a whole number, 1 or more, or
 * `fallback` when unset. Anything else (0, a fraction, NaN, a string) fails `invalid-argument`
 * naming the option, instead of a loop that never runs or a timer that fires at once.
 */
export function positive(what: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: ${value}; give a whole number, 1 or more`,
    );
  }
  return value;
}

import { MAX_STREAM_KEY_LENGTH } from "./constants.js";
import { fileError } from "./errors.js";

const STREAM_KEY_CHARS = /^[A-Za-z0-9._-]*$/;

/**
 * Upstream's rule (sea-streamer-types `is_valid_stream_key`). It also accepts the empty key, so the
 * decoder does too; writers go through `validateStreamKey`, which does not.
 */
export function isValidStreamKey(key: string): boolean {
  return key.length <= MAX_STREAM_KEY_LENGTH && STREAM_KEY_CHARS.test(key);
}

/** Throws `INVALID_STREAM_KEY` naming what is wrong, so the fix is obvious. */
export function validateStreamKey(key: string): void {
  if (key.length === 0) {
    throw fileError(
      "INVALID_STREAM_KEY",
      "Stream key is empty: use 1 to 249 characters of A-Z a-z 0-9 . _ -",
    );
  }
  if (key.length > MAX_STREAM_KEY_LENGTH) {
    throw fileError(
      "INVALID_STREAM_KEY",
      `Stream key is ${key.length} characters long: shorten it to at most ${MAX_STREAM_KEY_LENGTH}`,
    );
  }
  if (!STREAM_KEY_CHARS.test(key)) {
    const bad = [...key].find((c) => !STREAM_KEY_CHARS.test(c)) ?? "";
    throw fileError(
      "INVALID_STREAM_KEY",
      `Stream key ${JSON.stringify(key)} contains ${JSON.stringify(bad)}: use only A-Z a-z 0-9 . _ -`,
    );
  }
}

import { RustStreamError } from "@ruststream/core";

/**
 * A TTL as the server keeps one (a message's `Nats-TTL`, a KV bucket's markers): whole seconds, at
 * least one (it truncates a duration to seconds and refuses less). Given in milliseconds, as every
 * time this package takes; anything else is refused naming `what`.
 */
export function wholeSeconds(ms: number, what: string): number {
  if (!Number.isSafeInteger(ms) || ms < 1000 || ms % 1000 !== 0) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: ${JSON.stringify(ms)} is not a TTL the server keeps: give whole seconds in milliseconds, 1000 or more`,
    );
  }
  return ms / 1000;
}

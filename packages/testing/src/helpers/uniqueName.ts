import { randomBytes } from "node:crypto";

/**
 * A topic, key, stream, group or subscription name no other run used:
 * `rs-test-<prefix>-<ms since 1970, hex>-<8 random hex>`. The time keeps names of different runs
 * apart on a long-lived server however many runs it has seen; the random part keeps apart those
 * made in the same millisecond, by one process or by several (or by worker threads, which share a
 * pid). Only letters, digits, `-` and what the prefix brings, which Redis, Kafka, Pulsar and file
 * names all accept, and `rs-test-` tells a test's leftovers on a shared broker from anything else.
 */
export function uniqueName(prefix: string): string {
  return `rs-test-${prefix}-${Date.now().toString(16)}-${randomBytes(4).toString("hex")}`;
}

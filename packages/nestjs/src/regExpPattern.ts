import { RustStreamError } from "@ruststream/core";
import type { PatternExtras } from "./patternOptions.js";

/** What a regular-expression pattern is named by: its subscriber's name, as `String(pattern)`. */
export function regExpPatternName(pattern: RegExp): string {
  return String(pattern);
}

/**
 * Refuses a regular-expression pattern with no `source` in its extras, naming the fix. Nest's Kafka
 * transport subscribes to the topics a RegExp matches; no RustStream broker subscribes by regular
 * expression (its Kafka topics refuse a name starting with "^"), and the ones that read several
 * topics at once do it by their own wildcards, so the pattern's extras name that subscription.
 */
export function assertRegExpSource(name: string, own: PatternExtras): void {
  if (own.source !== undefined) return;
  throw regExpRefusal(
    `pattern ${name}`,
    'in the pattern\'s extras: { ruststream: { source: new NatsSubject("orders.*", { redeliverTo: "orders.retry" }) } } or new RedisPubSubPattern("orders.*"); or give one string pattern per topic',
  );
}

/** Why `what` cannot read by a regular expression, and `fix`: where the broker's wildcard goes. */
export function regExpRefusal(what: string, fix: string): RustStreamError {
  return new RustStreamError(
    "unsupported",
    `${what}: no RustStream broker subscribes by regular expression (Kafka topics refuse "^" names; NATS subjects and Redis Pub/Sub take their own wildcards). Name what it reads as the broker's wildcard subscription ${fix}`,
  );
}

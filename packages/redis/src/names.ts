import { type ReadonlyHeaderMap, readRetryCount } from "@ruststream/core";
import { writeRetryCount } from "@ruststream/core/broker";

/**
 * The names RustStream's Redis crate uses on the wire, so a TypeScript and a Rust service can share a
 * stream, a list or a channel.
 */
export const redisHeaders = {
  /** The partition key of a message: a plain header, since Redis has no partitions. */
  partitionKey: "redis-partition-key",
  /** How many times the server has handed a reclaimed entry out (XPENDING's delivery count). */
  deliveryCount: "redis-delivery-count",
  /** How long a reclaimed entry sat pending before this read, in milliseconds. */
  idleMs: "redis-idle-ms",
  /** Why the broker moved a message to a dead letter (RustStream's Redis name). */
  deadLetterReason: "x-dead-letter-reason",
} as const;

/** Stream entry fields: the payload, and one field per header under a prefix. */
export const streamFields = {
  payload: "_payload",
  headerPrefix: "h:",
} as const;

/** Default suffixes of the keys a descriptor derives from its own key. */
export const keySuffixes = {
  /** The reliable list's processing list. */
  processing: ".processing",
  /** The reliable list's claim times, for orphan recovery. */
  recovery: ".recovery",
  /** A stream's durable delayed-retry sorted set. */
  delayed: ".delayed",
} as const;

/** Due or orphaned members a sweep takes per pass, as in RustStream. */
export const SWEEP_BATCH = 128;

/**
 * The headers of a copy that goes back for another delivery: the `x-ruststream-retry-count` header
 * raised by the deliveries the original had (one, unless it was reclaimed), every other header as it
 * was. The runtime's attempt is that header plus the copy's own delivery count, so the count travels
 * in the message, as RustStream's Redis crate carries it, and a Rust service reading the same key
 * counts alike. Nothing spent, nothing written: a copy of an entry never handed out stays identical.
 */
export function countedHeaders(headers: ReadonlyHeaderMap, deliveries: number): ReadonlyHeaderMap {
  if (deliveries <= 0) return headers;
  return writeRetryCount(headers.clone(), readRetryCount(headers) + deliveries);
}

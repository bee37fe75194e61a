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

import { deadLetterHeaderNames } from "@ruststream/core/broker";

/**
 * The names this broker writes. The partition key, the priority, the deduplication key and the
 * dead letter's origin are columns of the queue table (`schema.ts`), not headers; a delivery of a
 * dead-lettered row shows its origin in core's header names, as every broker without names of its
 * own does. The outbox writes two headers in its rows: the message's id, which every relayed copy
 * carries (the Rust crate's name, which an inbox keys on), and the destination the relay publishes
 * to, which it takes off before publishing.
 */
export const postgresHeaderNames = {
  deadLetter: deadLetterHeaderNames,
  outboxId: "x-ruststream-outbox-id",
  outboxDestination: "x-ruststream-outbox-destination",
} as const;

import { deadLetterHeaderNames } from "@ruststream/core/broker";

/**
 * The names this broker writes. The partition key, the priority, the deduplication key and the
 * dead letter's origin are columns of the queue table (`schema.ts`), not headers; a delivery of a
 * dead-lettered row shows its origin in core's header names, as every broker without names of its
 * own does.
 */
export const postgresHeaderNames = {
  deadLetter: deadLetterHeaderNames,
} as const;

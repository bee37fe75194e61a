import { headerNames } from "@ruststream/core";

// The names the file broker writes into a `.ss` file, RustStream's own, so a TypeScript and a Rust
// service read each other's messages. The `rs1:`/`rs2:` header envelope is a format, not a name:
// it lives in wire/envelope.ts.

/**
 * The partition key travels in core's plain header: a `.ss` frame has no key field of its own, and
 * RustStream's file broker writes the same header.
 */
export const PARTITION_KEY_HEADER = headerNames.partitionKey;

/** Every delivery carries its sequence number in its stream under this header, as in RustStream. */
export const SEQUENCE_HEADER = "stream-sequence";

/** RustStream's file broker primes a fresh file with one message on this key; readers skip it. */
export const PRIME_STREAM_KEY = "ruststream-internal";

/**
 * A retry copy or a dead letter a named consumer writes for a message carries that message's origin
 * under this header, `<consumer> <stream key> <sequence>`: a consumer restarted before its position
 * was stored finds the copy in the file and does not deliver the original again (see
 * stream/copiesInFile.ts). Neither part has a space: consumer names and stream keys exclude it.
 */
export const COPY_OF_HEADER = "x-ruststream-file-copy-of";

/**
 * Every frame of a transaction of two or more messages carries its place in the transaction under
 * this header, `<start> <index>/<count>`, first in its envelope: `start` is the file offset where the
 * transaction's first frame begins, `index` counts from 1. Readers hold a transaction's frames until
 * its last one is read whole, and a reopening writer cuts a transaction left without its last frame
 * (wire/transactionMark.ts).
 */
export const TRANSACTION_HEADER = "x-ruststream-file-tx";

/**
 * A connection's reply inbox is the stream key `ruststream-inbox-<uuid>` of its own file, one per
 * connection that sends requests: `reply-to` of each of its requests (replyInbox.ts).
 */
export const INBOX_KEY_PREFIX = "ruststream-inbox-";

import type { HeaderMap, ReadonlyHeaderMap } from "./headerMap.js";

/**
 * The header names the framework itself reads and writes. They match RustStream's, so a TypeScript
 * and a Rust service can share one topic.
 */
export const headerNames = {
  contentType: "content-type",
  correlationId: "correlation-id",
  replyTo: "reply-to",
  messageId: "message-id",
  /**
   * On a request: its requester takes several replies (`RequestOptions.onPartial`), so a responder
   * may answer more than once, marking each reply but the last with `moreReplies`.
   */
  replyStream: "x-ruststream-reply-stream",
  /** On a reply: not the last one; more replies to the same request follow. */
  moreReplies: "x-ruststream-more-replies",
  /** The framework's attempt counter on copies it republishes: ASCII decimal, absent means 0. */
  retryCount: "x-ruststream-retry-count",
  /**
   * On a dead-lettered copy: the retry count it carried when it was moved. Its attempts at the dead
   * letter count from there, so a subscriber on the dead letter gets its own `maxAttempts`.
   */
  deadLetterRetryCount: "x-ruststream-dlq-retry-count",
  traceparent: "traceparent",
  tracestate: "tracestate",
  /** Publish time in milliseconds since the epoch, ASCII decimal. */
  publishedAt: "x-ruststream-published-at",
  /**
   * Where a broker with no native key carries a message's partition key. Brokers that have a key of
   * their own (Kafka's record key, Pulsar's partition key) or a name of their own (Redis) use that.
   */
  partitionKey: "partition-key",
} as const;

const decimal = /^(0|[1-9][0-9]{0,8})$/;

/** The retry count a message carries; absent or malformed counts as 0, as in RustStream. */
export function readRetryCount(headers: ReadonlyHeaderMap): number {
  const text = headers.getString(headerNames.retryCount);
  return text !== undefined && decimal.test(text) ? Number(text) : 0;
}

/** Writes the retry count, as a copy the framework republishes carries it. */
export function writeRetryCount(headers: HeaderMap, count: number): HeaderMap {
  return headers.set(headerNames.retryCount, String(count));
}

/**
 * The retry count of a dead-lettered copy, and the same count as the one it was moved with: the
 * count keeps every delivery the message had (RustStream's dead letters carry it so), the second
 * lets the dead letter's own attempts start from 1.
 */
export function writeDeadLetterRetryCount(headers: HeaderMap, count: number): HeaderMap {
  headers.set(headerNames.deadLetterRetryCount, String(count));
  return writeRetryCount(headers, count);
}

/**
 * The retry count a copy carried when it was dead-lettered, 0 when it was not (or the header is
 * malformed, or past the count it carries now, which no copy of ours writes).
 */
export function readDeadLetterRetryCount(headers: ReadonlyHeaderMap): number {
  const text = headers.getString(headerNames.deadLetterRetryCount);
  if (text === undefined || !decimal.test(text)) return 0;
  const moved = Number(text);
  return moved <= readRetryCount(headers) ? moved : 0;
}

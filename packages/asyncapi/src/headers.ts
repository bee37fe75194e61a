import { headerNames } from "@ruststream/core";
import type { SchemaObject } from "./document.js";

/** The key of the one header schema every message references. */
export const headersSchemaKey = "RustStreamHeaders";

const decimal = "^(0|[1-9][0-9]*)$";

/**
 * The headers the runtime itself reads and writes, the same names as RustStream's, so a reader of
 * the document knows what a TypeScript or Rust service puts beside the payload. All optional: a
 * message published by another client may carry none of them. The partition key is not here: each
 * broker carries it its own way (Kafka's record key, Redis's `redis-partition-key`).
 */
export function headersSchema(): SchemaObject {
  return {
    type: "object",
    description: "The headers RustStream reads and writes; all optional.",
    properties: {
      [headerNames.contentType]: {
        type: "string",
        description: "The payload's media type, from the codec that encoded it.",
      },
      [headerNames.correlationId]: {
        type: "string",
        description: "Ties a reply to its request: a reply carries its request's correlation-id.",
      },
      [headerNames.replyTo]: {
        type: "string",
        description: "Where a request wants its reply, for a subscriber that replies to reply-to.",
      },
      [headerNames.messageId]: { type: "string", description: "The message's id." },
      [headerNames.retryCount]: {
        type: "string",
        pattern: decimal,
        description:
          "Deliveries a republished retry copy or a dead-lettered copy had before, in ASCII decimal; absent means 0.",
      },
      [headerNames.deadLetterRetryCount]: {
        type: "string",
        pattern: decimal,
        description:
          "On a dead-lettered copy, the retry count it was moved with: its attempts at the dead letter count from there.",
      },
      [headerNames.traceparent]: {
        type: "string",
        pattern: "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$",
        description: "W3C trace context, carried onto replies, ctx.out publishes and retries.",
      },
      [headerNames.tracestate]: { type: "string", description: "W3C trace state." },
      [headerNames.publishedAt]: {
        type: "string",
        pattern: decimal,
        description: "Publish time in milliseconds since the epoch, ASCII decimal.",
      },
    },
  };
}

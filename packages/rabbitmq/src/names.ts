import { headerNames } from "@ruststream/core";

/**
 * The names this broker writes on its wire, RustStream's (`ruststream-lapin`) where it has one, so a
 * TypeScript and a Rust service share a queue. AMQP has no message key: the partition key travels in
 * the `amqp-partition-key` header. Dead-letter copies the runtime writes carry core's origin headers.
 */
export const rabbitHeaderNames = {
  partitionKey: "amqp-partition-key",
} as const;

/**
 * The headers that are AMQP properties on the wire: a publish moves them out of the header table
 * into the properties (where the server rewrites `reply-to` for direct reply-to, and every other
 * AMQP client reads them), and a delivery shows them as headers again.
 */
export const propertyHeaders = {
  contentType: headerNames.contentType,
  correlationId: headerNames.correlationId,
  replyTo: headerNames.replyTo,
  messageId: headerNames.messageId,
} as const;

/**
 * The header table entry that replaces a table which could not be read safely (nested too deep,
 * or not well-formed), holding why: the delivery's decode error. Written by the frame guard
 * (client/contentHeader.ts) in place of what the sender wrote, never sent.
 */
export const unreadableHeaders = "x-ruststream-unreadable-headers";

/** The wait queue of a delayed retry: one per queue and delay, its TTL dead-lettering back. */
export function waitQueueName(queue: string, delayMs: number): string {
  return `${queue}.wait.${delayMs}`;
}

/** The pseudo-queue of direct reply-to, and the prefix of the addresses the server makes of it. */
export const directReplyTo = "amq.rabbitmq.reply-to";

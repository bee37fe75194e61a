import type { Capabilities } from "@ruststream/testing/conformance";

// What each Redis transport does, declared once for the real server and the in-process stand-in
// alike: the suites hold both to it.

/** A stream read by a consumer group: pending entries, claims, the durable delayed retry. */
export const streamCapabilities: Capabilities = {
  backlog: "missed",
  ack: true,
  drop: true,
  requeue: true,
  delayedRequeue: true,
  durable: true,
  partitionKey: true,
  batches: true,
  seek: true,
  transactions: true,
  request: true,
};

/**
 * A reliable list: a work queue with a processing list, so a backlog is delivered and settlement is
 * exact, but there is no delayed redelivery and no position to seek to.
 */
export const listCapabilities: Capabilities = {
  ...streamCapabilities,
  backlog: "delivered",
  delayedRequeue: false,
  seek: false,
};

/** Pub/Sub: fire-and-forget, so no settle verb does anything and nothing waits for a new client. */
export const pubSubCapabilities: Capabilities = {
  ...streamCapabilities,
  ack: false,
  drop: false,
  requeue: false,
  delayedRequeue: false,
  durable: false,
  seek: false,
};

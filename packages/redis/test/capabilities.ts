import { type Capabilities, notBuilt } from "@ruststream/testing/conformance";

// What each Redis transport does, declared once for the real server and the in-process stand-in
// alike: the suites hold both to it. `false` is what the transport cannot do; `notBuilt` is what
// this package owes.

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
  settleAfterClose: true,
};

/**
 * A reliable list: a work queue with a processing list, so a backlog is delivered and settlement is
 * exact, but there is no delayed redelivery and no position to seek to.
 */
export const listCapabilities: Capabilities = {
  ...streamCapabilities,
  backlog: "delivered",
  // A list has no delay of its own, but the sorted set a stream's delayed retry uses would serve a
  // list as well (moved out of processing and back onto the queue when due).
  delayedRequeue: notBuilt("a sorted-set delayed retry, as streams have"),
  // A popped value leaves the list: there is no position to go back to.
  seek: false,
};

/**
 * Pub/Sub: fire-and-forget, so no settle verb does anything, nothing waits for a new client and
 * nothing is kept to seek in.
 */
export const pubSubCapabilities: Capabilities = {
  ...streamCapabilities,
  ack: false,
  drop: false,
  requeue: false,
  delayedRequeue: false,
  durable: false,
  seek: false,
  settleAfterClose: false,
};

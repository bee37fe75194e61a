import type { Capabilities } from "@ruststream/testing/conformance";

// What each subscription type does, declared once for the real broker and the in-process stand-in
// alike: the suites hold both to it.

/**
 * Shared and Key_Shared: the broker redelivers a negative ack itself, counted; `nackAfter` is a
 * copy to the retry topic with Pulsar's delayed delivery. A new subscription starts at the end of
 * its topic.
 */
export const sharedCapabilities: Capabilities = {
  backlog: "missed",
  ack: true,
  drop: true,
  requeue: true,
  delayedRequeue: true,
  durable: true,
  partitionKey: true,
  batches: true,
  seek: true,
  transactions: false,
  request: true,
};

/**
 * Exclusive and Failover: a requeue is a copy to the retry topic (the broker cannot redeliver one
 * message alone there), and `nackAfter` is `unsupported`: those subscription types dispatch a
 * delayed message at once, so the runtime keeps the delay.
 */
export const singleCapabilities: Capabilities = {
  ...sharedCapabilities,
  delayedRequeue: false,
};

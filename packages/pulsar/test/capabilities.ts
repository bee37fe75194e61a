import { type Capabilities, notBuilt } from "@ruststream/testing/conformance";

// What each subscription type does, declared once for the real broker and the in-process stand-in
// alike: the suites hold both to it. `false` is what Pulsar or the subscription type cannot do;
// `notBuilt` is what this package owes.

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
  // Pulsar has them, through its transaction coordinator.
  transactions: notBuilt("our wire client speaks no transaction protocol"),
  request: true,
  settleAfterClose: true,
};

/**
 * Exclusive and Failover: a requeue is a copy to the retry topic (the broker cannot redeliver one
 * message alone there).
 */
export const singleCapabilities: Capabilities = {
  ...sharedCapabilities,
  // Those subscription types dispatch a delayed message at once, so the runtime keeps the delay.
  delayedRequeue: false,
};

import type { Capabilities } from "@ruststream/testing/conformance";

// What each kind of subscription does, declared once for the real server and the in-process
// stand-in alike: the suites hold both to it. `false` is what NATS cannot do; `notBuilt` is what
// this package owes.

/**
 * Core NATS: the server keeps nothing and acknowledges nothing, so no settle verb does anything
 * (each answers `unsupported`; the runtime republishes retry copies) and a subscription sees only
 * what is published while it listens.
 */
export const coreCapabilities: Capabilities = {
  backlog: "missed",
  ack: false,
  drop: false,
  requeue: false,
  delayedRequeue: false,
  durable: false,
  partitionKey: true,
  batches: true,
  // Nothing is kept to seek in.
  seek: false,
  // Core NATS has no way to make several publishes visible at once.
  transactions: false,
  request: true,
  settleAfterClose: false,
};

/**
 * A JetStream pull consumer (durable, as the suites' "same subject, same group" asks): the server
 * settles, redelivers and counts, a new consumer starts at the stream's first message.
 */
export const jetStreamCapabilities: Capabilities = {
  backlog: "delivered",
  ack: true,
  drop: true,
  requeue: true,
  delayedRequeue: true,
  durable: true,
  partitionKey: true,
  batches: true,
  seek: true,
  // NATS 2.12's atomic batch publish, on a stream that allows it.
  transactions: true,
  // Requests travel over core NATS: on a subject a stream stores, the stream itself answers a
  // request with its acknowledgement, so a request/reply exchange cannot run on one.
  request: false,
  // A close gives back what was read ahead and keeps what was handed out until it settles.
  settleAfterClose: true,
};

/**
 * A declared durable push consumer: settled as the pull consumers are, and a seek makes it again
 * at the position as it does a pull durable.
 */
export const pushCapabilities: Capabilities = jetStreamCapabilities;

/**
 * An ephemeral push consumer (as the suites make it, from now): the subscription's own, gone
 * with it, so nothing is shared with the next one; settled and seeking as the durable one.
 */
export const ephemeralPushCapabilities: Capabilities = {
  ...jetStreamCapabilities,
  backlog: "missed",
  durable: false,
};

/**
 * A KV watch (as the suites make it, from now): an ephemeral consumer of its own on the bucket's
 * stream, settled by the server as JetStream's are; a new watch from now sees nothing an earlier
 * one left.
 */
export const kvWatchCapabilities: Capabilities = {
  backlog: "missed",
  ack: true,
  drop: true,
  requeue: true,
  delayedRequeue: true,
  // A watch is its own consumer, gone with its connection: nothing is shared with the next one.
  durable: false,
  partitionKey: true,
  batches: true,
  seek: true,
  // A bucket's stream, as the KV clients declare it, takes no atomic batches.
  transactions: false,
  // A put is stored by the bucket's stream, which answers a request with its acknowledgement.
  request: false,
  settleAfterClose: false,
};

/**
 * A JetStream ordered consumer (as the suites make it, from now): ephemeral and acknowledging
 * nothing (ack policy none), so every settle verb answers `unsupported` as core NATS's do and the
 * runtime republishes retry copies, which the stream stores again; it reads the stream, so it seeks.
 */
export const orderedCapabilities: Capabilities = {
  backlog: "missed",
  ack: false,
  drop: false,
  requeue: false,
  delayedRequeue: false,
  // The client's own consumer, gone with it: nothing is shared with the next one.
  durable: false,
  partitionKey: true,
  batches: true,
  seek: true,
  // The suites' streams take atomic batches, as JetStream's do.
  transactions: true,
  // A stream stores the subject and answers a request with its acknowledgement.
  request: false,
  settleAfterClose: false,
};

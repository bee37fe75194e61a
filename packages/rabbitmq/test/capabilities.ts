import type { Capabilities } from "@ruststream/testing/conformance";

// What each queue type does, declared once for the real node and the in-process stand-in alike: the
// suites hold both to it. `false` is what RabbitMQ or the queue type cannot do; `notBuilt` is what
// this package owes.

/** A classic queue. */
export const classicCapabilities: Capabilities = {
  // A subscription declares its queue: what was published to the name before went nowhere (the
  // suites publish without `mandatory` for that, see conformance.ts).
  backlog: "missed",
  ack: true,
  drop: true,
  // A classic queue counts no deliveries: a basic.reject with requeue would bring a failing message
  // back uncounted for ever, so requeue answers `unsupported` and the runtime copies it, counted.
  requeue: false,
  // A wait queue per delay, its TTL dead-lettering back.
  delayedRequeue: true,
  durable: true,
  partitionKey: true,
  batches: true,
  // A queue keeps no offsets to go back to.
  seek: false,
  transactions: true,
  request: true,
  settleAfterClose: true,
};

/** A quorum queue: the server counts, so a requeue is the server's. */
export const quorumCapabilities: Capabilities = {
  ...classicCapabilities,
  requeue: true,
};

/**
 * A stream queue (read with `RabbitStream`, from `"next"` unless told otherwise). It keeps every
 * message for every reader, so a requeue has nothing to put back: it answers `unsupported` and the
 * runtime appends a counted copy, which the subscription reads in turn.
 */
export const streamCapabilities: Capabilities = {
  ...classicCapabilities,
  // An AMQP consumer of a stream keeps no offset on the server (3.10 stores offsets for consumers
  // of its stream protocol only): a new subscription reads from the offset its descriptor names, so
  // what the last one left unsettled does not come back to it.
  durable: false,
  // 3.10 drops a dead letter routed to a stream, so no wait queue can bring a copy back: the
  // runtime holds the copy for the delay and appends it.
  delayedRequeue: false,
  // Each delivery's position is its offset: a subscription consumes again from an offset or a time.
  seek: true,
  // What a new subscription reads is its descriptor's offset, not what the last one settled.
  settleAfterClose: false,
};

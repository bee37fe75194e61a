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
};

/** A quorum queue: the server counts, so a requeue is the server's. */
export const quorumCapabilities: Capabilities = {
  ...classicCapabilities,
  requeue: true,
};

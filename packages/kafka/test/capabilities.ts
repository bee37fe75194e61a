import type { Capabilities } from "@ruststream/testing/conformance";

// What a KafkaTopic does in each commit mode, declared once for every engine and the in-process
// stand-in alike: the suites hold each of them to it.

/**
 * `tracked`: ack and drop settle the offset, a requeue serves the record again (its offset holding
 * the committed position), what was left unsettled comes back to the group's next reader. Kafka
 * has no delayed redelivery (the runtime republishes a copy). Transactions are the publisher's
 * (given a transactional id), and consumers read committed records only. Request/reply is the
 * publisher's, through the connection's reply inbox (a topic of its own).
 */
export const trackedCapabilities: Capabilities = {
  backlog: "missed",
  ack: true,
  drop: true,
  requeue: true,
  delayedRequeue: false,
  durable: true,
  partitionKey: true,
  batches: true,
  seek: true,
  transactions: true,
  request: true,
};

/**
 * `auto`: the client commits what it handed over, so ack and drop are advisory (`ok`, nothing to
 * do), a requeue is `unsupported` (nothing would bring the record back), and what a client held
 * unsettled does not come back to the next one: not durable in the suites' sense.
 */
export const autoCapabilities: Capabilities = {
  ...trackedCapabilities,
  requeue: false,
  durable: false,
};

import type { Capabilities } from "@ruststream/testing/conformance";

// What a KafkaTopic does in each commit mode, declared once for every engine and the in-process
// stand-in alike: the suites hold each of them to it. `false` is what Kafka or the mode cannot do;
// `notBuilt` is what this package owes.

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
  // Kafka has no delayed redelivery, and a record held back in the client would pin its
  // partition's committed position for the whole delay: the runtime republishes a copy instead.
  delayedRequeue: false,
  durable: true,
  partitionKey: true,
  batches: true,
  seek: true,
  transactions: true,
  request: true,
  settleAfterClose: true,
};

/**
 * `auto`: the client commits what it handed over, so ack and drop are advisory (`ok`, nothing to
 * do), and nothing brings a record back: by the mode, not by Kafka.
 */
export const autoCapabilities: Capabilities = {
  ...trackedCapabilities,
  // The offset is committed once the record is handed over: a requeue has nothing to hold.
  requeue: false,
  // Likewise what a client held unsettled is committed already: the next client starts past it.
  durable: false,
  // Nothing a client settles changes what the next one reads, before a close or after it.
  settleAfterClose: false,
};

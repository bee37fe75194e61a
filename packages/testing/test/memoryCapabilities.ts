import type { Capabilities } from "../src/conformanceEntry.js";

/** What a memory topic in a group does: every settle verb, durable groups, every capability. */
export const memoryTopicCapabilities: Capabilities = {
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

/** A memory queue: one shared group from the oldest retained message. */
export const memoryQueueCapabilities: Capabilities = {
  ...memoryTopicCapabilities,
  backlog: "delivered",
};

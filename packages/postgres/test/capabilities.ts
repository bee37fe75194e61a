import type { Capabilities } from "@ruststream/testing/conformance";

// What a queue does, declared once for the real server and the in-process stand-in, in both of its
// modes (leased claims, transactional handlers): the suites hold each to it. `false` is what a queue
// table cannot do; `notBuilt` is what this package owes.
export const queueCapabilities: Capabilities = {
  // Rows wait in the table for whoever subscribes.
  backlog: "delivered",
  ack: true,
  // A drop deletes the row (or moves it to the declared dead letter).
  drop: true,
  requeue: true,
  // The row's run time moves.
  delayedRequeue: true,
  // Rows a client left unsettled are released at its shutdown (or come back when its lease ends).
  durable: true,
  partitionKey: true,
  batches: true,
  // A claimed row that was acked is deleted (or kept done, never claimed again): a queue has no
  // position to go back to.
  seek: false,
  // The publisher's transaction inserts every row in one statement.
  transactions: true,
  // A reply queue per connection (replyInbox.ts).
  request: true,
  settleAfterClose: true,
};

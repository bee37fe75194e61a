import type { Delivery } from "./delivery.js";
import { readDeadLetterRetryCount, readRetryCount } from "./headerNames.js";

/**
 * Every delivery a message has had, this one included: what a copy republished after it carries in
 * its retry count. The broker's count restarts on every republished copy, and a copy carries the
 * deliveries before it in the retry-count header, so the sum is the total whichever way the message
 * came back (requeue, copy, or both in turn).
 */
export function deliveriesOf(delivery: Delivery): number {
  return readRetryCount(delivery.headers) + (delivery.redeliveryCount ?? 1);
}

/**
 * The attempt a delivery is at the destination it was read from, counting from 1: its deliveries,
 * less those it had before it was dead-lettered here, so `maxAttempts` on a dead letter's own
 * subscriber counts that subscriber's attempts, not the source's.
 */
export function attemptOf(delivery: Delivery): number {
  return deliveriesOf(delivery) - readDeadLetterRetryCount(delivery.headers);
}

import type { Delivery } from "./delivery.js";
import { readRetryCount } from "./headerNames.js";

/**
 * The attempt a delivery is, counting from 1. The broker's count restarts on every republished copy,
 * and a copy carries the deliveries before it in the retry-count header, so the sum is the total
 * whichever way the message came back (requeue, copy, or both in turn).
 */
export function attemptOf(delivery: Delivery): number {
  return readRetryCount(delivery.headers) + (delivery.redeliveryCount ?? 1);
}

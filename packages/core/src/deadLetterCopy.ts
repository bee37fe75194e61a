import { deliveriesOf } from "./attempt.js";
import type { DeadLetterOrigin } from "./deadLetter.js";
import type { Delivery } from "./delivery.js";
import type { HeaderMap } from "./headerMap.js";
import { writeDeadLetterRetryCount } from "./headerNames.js";

/** The parts of a dead-lettered copy that depend on the delivery, not on the broker moving it. */
export interface DeadLetterCopy {
  /** The delivery's headers with its deliveries so far as the dead letter's retry count. */
  readonly headers: HeaderMap;
  readonly deadLetterOrigin: DeadLetterOrigin;
}

/**
 * What every dead-lettered copy of `delivery` carries, whether the runtime or a broker package
 * moves it: its origin (source, partition, position, reason) and the deliveries it had, as the
 * original framework writes them, so a reader of the dead letter sees how many times the message
 * was tried, whichever language or broker tried it last. The headers are a fresh copy the caller
 * may change.
 */
export function deadLetterCopyOf(delivery: Delivery, reason: string): DeadLetterCopy {
  return {
    headers: writeDeadLetterRetryCount(delivery.headers.clone(), deliveriesOf(delivery)),
    deadLetterOrigin: {
      source: delivery.name,
      ...(delivery.partition === undefined ? {} : { partition: delivery.partition }),
      position: String(delivery.position),
      reason,
    },
  };
}

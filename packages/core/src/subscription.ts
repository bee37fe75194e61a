import type { Delivery } from "./delivery.js";

/**
 * The deliveries of one subscription, pulled one at a time: the broker hands over the next delivery
 * only when asked, so a slow consumer slows its source instead of buffering without bound.
 *
 * `for await` works; leaving the loop early closes the subscription.
 */
export interface Subscription<TDelivery extends Delivery = Delivery>
  extends AsyncIterable<TDelivery> {
  /** The topic, stream or queue. */
  readonly name: string;
  /**
   * The consumer group this subscription reads in, where it reads in one: a Kafka group id, a Redis
   * stream's group, a Pulsar subscription, a named file consumer, a memory group. What the
   * OpenTelemetry messaging conventions call `messaging.consumer.group.name`. Absent where every
   * subscriber gets every message on its own (Redis pub/sub, an anonymous reader).
   */
  readonly group?: string | undefined;
  /**
   * The next delivery, waiting for one if needed; `done` once the subscription is closed. Rejects
   * with code `closed` once the broker has shut down.
   */
  next(): Promise<IteratorResult<TDelivery, undefined>>;
  /**
   * Stops pulling: a waiting `next()` resolves `done`. Deliveries handed out and not yet settled
   * stay valid; where the broker tracks them, unsettled ones come back to the source.
   */
  close(): Promise<void>;
  [Symbol.asyncIterator](): AsyncIterator<TDelivery, undefined>;
}

/**
 * The `AsyncIterator` every pull-based subscription returns: `next()` pulls, and leaving a
 * `for await` loop early closes the subscription.
 */
export function subscriptionIterator<TDelivery extends Delivery>(
  subscription: Pick<Subscription<TDelivery>, "next" | "close">,
): AsyncIterator<TDelivery, undefined> {
  return {
    next: () => subscription.next(),
    return: async () => {
      await subscription.close();
      return { done: true, value: undefined };
    },
  };
}

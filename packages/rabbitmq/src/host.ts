import type { OutgoingMessage } from "@ruststream/core";
import type { SubscriptionHost } from "@ruststream/core/broker";
import type { Link, LinkProperties } from "./link.js";

/** A message to bring back to `queue` after a delay, as a delayed retry copies it. */
export interface DelayedCopy {
  readonly queue: string;
  readonly content: Uint8Array;
  readonly properties: LinkProperties;
}

/**
 * What a subscription needs from its connection: no more, so it never imports the connection.
 * `ConnectionBase` gives `assertOpen` and `forget`.
 */
export interface RabbitHost extends SubscriptionHost {
  readonly link: Link;
  /**
   * Publishes `copy` to the queue's wait queue for `delayMs` (declared on first use: a TTL that
   * dead-letters back to the queue), resolving once the server confirmed it.
   */
  publishLater(copy: DelayedCopy, delayMs: number): Promise<void>;
  /** The wait queues of `queue` this connection declared (a delayed retry went through each). */
  waitQueuesOf(queue: string): readonly string[];
  /** A quorum queue's `x-delivery-limit`, where this connection declared or checked the queue. */
  deliveryLimit(queue: string): number | undefined;
  /**
   * Publishes a dead letter the package moves itself (through the default exchange, mandatory, as
   * the runtime's own dead letters go), resolving once the server confirmed it.
   */
  publishDeadLetter(message: OutgoingMessage): Promise<void>;
}

import type { OutgoingMessage, RustStreamError } from "@ruststream/core";
import type { SubscriptionHost } from "@ruststream/core/broker";
import type { PulsarPublishOptions } from "./publisher.js";

// What the subscriptions and their deliveries need from their connection, declared once for every
// subscription type (subscription/, delivery/). The connected broker implements it, so neither
// imports connection.ts; the publisher declares its own host in publisher.ts. Core's ConnectionBase
// holds the subscriptions (each a HostedSubscription) and takes them back at shutdown; one that
// closes itself calls forget().

/** What subscriptions and their deliveries need from their connection, beside core's. */
export interface PulsarHost extends SubscriptionHost {
  readonly isClosed: boolean;
  closedError(what: string): RustStreamError;
  /**
   * Publishes a copy this client makes for a delivery (a retry copy, a delayed one, a dead letter)
   * through a producer that creates `initialSubscription` with its topic, so nothing sent there is
   * lost before a reader comes. Resolves on the broker's receipt.
   */
  publishCopy(
    message: OutgoingMessage<PulsarPublishOptions>,
    initialSubscription: string,
  ): Promise<void>;
  /** Wall-clock milliseconds (the test's clock in-process), for a copy's delivery time. */
  now(): number;
}

import type { BackgroundListener, Clock } from "@ruststream/core";
import type { Coordinator, SubscriptionHost } from "@ruststream/core/broker";
import type { NatsLink } from "./client/link.js";

// What the subscriptions and their deliveries need from their connection, declared once for both
// modes (core/, jetstream/). The connected broker implements it, so neither imports connection.ts;
// the publisher declares its own host in publisher.ts. Core's ConnectionBase holds the
// subscriptions (each a HostedSubscription) and takes them back at shutdown; one that closes
// itself calls forget().

/** What subscriptions and their deliveries need from their connection, beside core's. */
export interface NatsHost extends SubscriptionHost {
  readonly link: NatsLink;
  /** Counts core NATS deliveries for a test's harness (JetStream's are counted by the stand-in). */
  readonly coordinator: Coordinator;
  /** Runs the JetStream working() beat: real time, or the test's clock in-process. */
  readonly clock: Clock;
  /**
   * Hears a subscription's work fail and recover where no handler sees it (its consumer gone from
   * the server): the app's background report, or the logger's lines on a connection made by hand.
   */
  readonly background: BackgroundListener;
}

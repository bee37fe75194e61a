import type { RawMessage } from "@ruststream/core";
import type { SubscriptionHost } from "@ruststream/core/broker";
import type { Link } from "./client/link.js";

// What the topic mode needs from the connection. The connected broker implements KafkaHost, so the
// mode never imports connection.ts; the publisher and the reply inbox declare their own hosts. Core's
// ConnectionBase holds the subscriptions (each a HostedSubscription) and takes them back at
// shutdown; one that closes itself calls forget().

/** What the topic subscription and its deliveries need from their connection, beside core's. */
export interface KafkaHost extends SubscriptionHost {
  readonly isClosed: boolean;
  readonly link: Link;
  /** Keeps a copy of what is published, on an in-process connection, for the test's `published()`. */
  record(message: RawMessage): void;
}

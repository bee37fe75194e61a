import type { Coordinator, SubscriptionHost } from "@ruststream/core/broker";
import type { Link } from "./client/link.js";

// What the subscription modes need from the connection, declared once for the three modes (and the
// reply inbox, which reads a stream like them). The connected broker implements RedisHost, so no
// mode imports connection.ts; the publisher declares its own host in publisher.ts. Core's
// ConnectionBase holds the subscriptions (each a HostedSubscription) and takes them back at
// shutdown; one that closes itself calls forget().

/** What subscriptions and their deliveries need from their connection, beside core's. */
export interface RedisHost extends SubscriptionHost {
  readonly isClosed: boolean;
  readonly link: Link;
  /** Approximate `MAXLEN` for every entry this connection appends, if set. */
  readonly maxLen: number | undefined;
  /** Counts for a test harness in the in-process mode; does nothing against a server. */
  readonly coordinator: Coordinator;
}

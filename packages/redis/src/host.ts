import type { RustStreamError } from "@ruststream/core";
import type { Coordinator } from "@ruststream/core/broker";
import type { Link } from "./client/link.js";

// What the subscription modes and the connection need from each other, declared once for the three
// modes (and the reply inbox, which reads a stream like them). The connected broker implements
// RedisHost, so no mode imports broker.ts; the publisher declares its own host in publisher.ts.

/** What subscriptions and their deliveries need from their connection. */
export interface RedisHost {
  readonly link: Link;
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
  readonly isClosed: boolean;
  /** Approximate `MAXLEN` for every entry this connection appends, if set. */
  readonly maxLen: number | undefined;
  /** Counts for a test harness in the in-process mode; does nothing against a server. */
  readonly coordinator: Coordinator;
}

/** A subscription as its connection tracks it, to return what it holds at shutdown. */
export interface HostedSubscription {
  /** Returns every delivery still held (buffered or unsettled); answers how many went back. */
  surrender(): Promise<number>;
  /** Stops pulling; a waiting pull rejects with `error`. */
  revoke(error: RustStreamError): Promise<void>;
}

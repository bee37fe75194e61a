import type { RawMessage, RustStreamError } from "@ruststream/core";
import type { Coordinator } from "@ruststream/core/broker";
import type { Link } from "./client/link.js";

/** What subscriptions, deliveries and publishers need from their connection. */
export interface RedisHost {
  readonly link: Link;
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
  readonly isClosed: boolean;
  closedError(what: string): RustStreamError;
  /** Approximate `MAXLEN` for every entry this connection appends, if set. */
  readonly maxLen: number | undefined;
  readonly maxPayloadBytes: number;
  /** Counts for a test harness in the in-process mode; does nothing against a server. */
  readonly coordinator: Coordinator;
  /** Where a name is published to when no policy says: lists and channels this connection reads. */
  transportOf(name: string): "stream" | "list" | "pubsub";
  /** Keeps a copy of what is published, on an in-process connection, for the test's `published()`. */
  record(message: RawMessage): void;
}

/** A subscription as its connection tracks it, to return what it holds at shutdown. */
export interface HostedSubscription {
  /** Returns every delivery still held (buffered or unsettled); answers how many went back. */
  surrender(): Promise<number>;
  /** Stops pulling; a waiting pull rejects with `error`. */
  revoke(error: RustStreamError): Promise<void>;
}

import type { Backlog } from "@ruststream/core/broker";

/**
 * What a broker says its source and publisher do, declared once per kind of source in its test file.
 * The suites read it instead of discovering it: a scenario for a capability declared absent is
 * registered as skipped, with the reason in its name, and the `declared capabilities` scenario fails
 * a broker whose answers differ from its declaration in either direction.
 */
export interface Capabilities {
  /** Whether a new subscription receives what was published before it opened. */
  readonly backlog: Backlog;
  /** `ack()` answers `ok` (a commit, a stored position), not `unsupported`. */
  readonly ack: boolean;
  /** `nack({ requeue: false })` answers `ok`: the message is gone for good. */
  readonly drop: boolean;
  /** `nack({ requeue: true })` answers `ok`: a promise that the same message comes back. */
  readonly requeue: boolean;
  /** `nackAfter(ms)` answers `ok`: the message comes back, no sooner than `ms`. */
  readonly delayedRequeue: boolean;
  /**
   * A new client of the same subject picks up where the last one left: what it settled stays gone,
   * what it left unsettled comes back (a consumer group, a stored position).
   */
  readonly durable: boolean;
  /** Deliveries report the partition key they were published with. */
  readonly partitionKey: boolean;
  /** Subscriptions hand over deliveries in batches (`supportsBatches`). */
  readonly batches: boolean;
  /** Subscriptions seek to a stored position (`supportsSeek`). */
  readonly seek: boolean;
  /** The publisher publishes atomically (`supportsTransactions`). */
  readonly transactions: boolean;
  /** The publisher sends requests and waits for their replies (`supportsRequest`). */
  readonly request: boolean;
}

/** The capabilities a scenario can need: every yes-or-no declaration. */
export type Capability = {
  [K in keyof Capabilities]: Capabilities[K] extends boolean ? K : never;
}[keyof Capabilities];

/** Why a scenario needing `needs` does not run under `declared`, or `undefined` when it runs. */
export function missing(
  needs: readonly Capability[] | undefined,
  declared: Capabilities,
): string | undefined {
  const absent = (needs ?? []).filter((need) => !declared[need]);
  return absent.length === 0 ? undefined : `the broker declares no ${absent.join(", no ")}`;
}

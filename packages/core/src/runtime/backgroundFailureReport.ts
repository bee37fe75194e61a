/**
 * What a `background-failure` event says of a failure in work beside the handlers (an outbox
 * relay's claim): where it happened and what it failed with. Its own file, so the events and the
 * running app both take it (and its recovery's) without importing each other.
 */
export interface BackgroundFailureReport {
  /** The work that failed, as it is counted (`outbox:<label>` for a relay's label). */
  readonly source: string;
  /** What it failed with. */
  readonly error: unknown;
}

/**
 * What a `background-recovered` event says: the work of `source`, which failed, works again (an
 * outbox relay's connection back, its claim done).
 */
export interface BackgroundRecoveryReport {
  /** The work that recovered, as its failures named it. */
  readonly source: string;
}

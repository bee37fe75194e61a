/**
 * Where a broker connection is. `connected`: requests go through. `reconnecting`: the client lost
 * the server and retries on its own; requests wait or fail meanwhile. `lost`: the client gave up,
 * or keeps being refused for a reason retrying cannot fix (its credentials, for one): what each
 * broker counts as lost is in its README, and a restart (or a changed setting) is the cure.
 * `closed`: `shutdown()` was called.
 */
export type ConnectionState = "connected" | "reconnecting" | "lost" | "closed";

/** A connection's new state, with what the client said of it when it is `reconnecting` or `lost`. */
export interface ConnectionChange {
  readonly state: ConnectionState;
  /** The client's own words (the error it retries after, the refusal it gave up on). */
  readonly reason?: string;
}

/**
 * Hears every change of a connection's state, synchronously, from inside the broker's client: keep
 * it cheap and never throw (a throw is rethrown outside the client, as an uncaught exception).
 */
export type ConnectionListener = (change: ConnectionChange) => void;

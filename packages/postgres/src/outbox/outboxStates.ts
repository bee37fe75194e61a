import type { ConnectionChange, ConnectionListener } from "@ruststream/core";

/**
 * The outbox connection's state changes, told to the listener its connecting side gave
 * (`connectOutbox({ onState })`) and to each relay that follows them: a connection takes one
 * listener, given before it exists, and the relays start later, so the last change is kept for
 * them.
 */
export class OutboxStates {
  readonly #given: ConnectionListener | undefined;
  readonly #followers = new Set<ConnectionListener>();
  #last: ConnectionChange | undefined;

  constructor(given: ConnectionListener | undefined) {
    this.#given = given;
  }

  /** The connection's listener: every follower hears the change, then the given listener. */
  readonly listener: ConnectionListener = (change: ConnectionChange) => {
    this.#last = change;
    // Followers are the relays' own reports, which catch what they throw; the given listener
    // last, so a throw of the user's (rethrown outside the client by the connection) skips no relay.
    for (const follower of [...this.#followers]) follower(change);
    this.#given?.(change);
  };

  /**
   * Sends every later change to `follower` until the function it answers is called; first, at
   * once, the last change if the connection is away now (`reconnecting`, `lost`): a relay started
   * then hears of it without waiting for the next change.
   */
  follow(follower: ConnectionListener): () => void {
    const last = this.#last;
    if (last !== undefined && (last.state === "reconnecting" || last.state === "lost")) {
      follower(last);
    }
    this.#followers.add(follower);
    return () => {
      this.#followers.delete(follower);
    };
  }
}

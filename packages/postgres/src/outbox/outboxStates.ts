import type { ConnectionChange, ConnectionListener } from "@ruststream/core";

/**
 * The outbox connection's state changes, told to the listener its connecting side gave
 * (`connectOutbox({ onState })`) and to each relay that follows them: a connection takes one
 * listener, given before it exists, and the relays start later.
 */
export class OutboxStates {
  readonly #given: ConnectionListener | undefined;
  readonly #followers = new Set<ConnectionListener>();

  constructor(given: ConnectionListener | undefined) {
    this.#given = given;
  }

  /** The connection's listener: every follower hears the change, then the given listener. */
  readonly listener: ConnectionListener = (change: ConnectionChange) => {
    // Followers are the relays' own reports, which catch what they throw; the given listener
    // last, so a throw of the user's (rethrown outside the client by the connection) skips no relay.
    for (const follower of [...this.#followers]) follower(change);
    this.#given?.(change);
  };

  /** Sends every later change to `follower` until the function it answers is called. */
  follow(follower: ConnectionListener): () => void {
    this.#followers.add(follower);
    return () => {
      this.#followers.delete(follower);
    };
  }
}

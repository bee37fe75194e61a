import type { PermissionViolationError } from "@nats-io/transport-node";

/** One running loop's pulls: the subject its requests go to now, and what a refusal does. */
interface Watched {
  readonly subject: () => string;
  readonly refused: (error: PermissionViolationError) => void;
}

/**
 * The running pulls of one connection, by the subject their requests are published to. The server
 * refuses a publish it does not permit with an error on the connection (the client's status),
 * naming the subject only, so the connection hands it to the pulls publishing there. The subject
 * is asked at each refusal: an ordered consumer's changes when the client creates it again.
 */
export class PullRefusals {
  readonly #watched = new Set<Watched>();

  /** A publish the server refused: the pulls whose requests went to its subject fail. */
  heard(error: PermissionViolationError): void {
    for (const watched of this.#watched) {
      if (watched.subject() === error.subject) watched.refused(error);
    }
  }

  /** Watches a loop's pulls until the returned function is called. */
  watch(subject: () => string, refused: (error: PermissionViolationError) => void): () => void {
    const watched = { subject, refused };
    this.#watched.add(watched);
    return () => this.#watched.delete(watched);
  }
}

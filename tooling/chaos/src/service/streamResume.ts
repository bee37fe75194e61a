// Where a stream's reader that keeps its own offset may resume after a SIGKILL without losing a
// message the runtime still holds.

/**
 * A stream cannot requeue or delay (`@ruststream/rabbitmq`'s README, "Stream queues"), so a retry
 * of a stream delivery is a copy the runtime appends, and a delayed one (a `retryAfter`, or a thrown
 * error's backoff) a copy it holds in memory, the original unsettled, until the delay is over; a
 * dead letter it writes, then acks. Until that copy or dead letter is published, the message lives
 * only in this process: an offset stored past it when the handler returned loses it to a SIGKILL
 * (what rabbitmq-stream-retry found). So the offset to resume from is the lowest such message's
 * while any is held, else the one after the last handled.
 */
export class StreamResume {
  readonly #held = new Set<bigint>();
  #next: bigint | undefined;

  /** The handler is done with `offset`; `held`: the runtime keeps a copy of it to publish. */
  handled(offset: bigint, held: boolean): void {
    this.#next = offset + 1n;
    if (held) this.#held.add(offset);
  }

  /** The copy or dead letter of the message at `offset` is published: nothing of it is held. */
  published(offset: bigint): void {
    this.#held.delete(offset);
  }

  /** The offset a start reads from: undefined before the first handling. */
  get next(): bigint | undefined {
    let lowest = this.#next;
    for (const offset of this.#held) if (lowest === undefined || offset < lowest) lowest = offset;
    return lowest;
  }
}

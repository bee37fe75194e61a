import type { ConsumeMessage } from "amqplib";

/**
 * What a stream consumer handed over on one channel, for consuming again after it: a stream keeps
 * no offset for an AMQP consumer, and the descriptor's `x-stream-offset` would read everything
 * again (`first`, an offset) or skip what came while the connection was down (`next`).
 */
export class StreamRun {
  /**
   * Offsets handed over and not settled yet, in arrival order: a consumer of a stream is delivered
   * its offsets in increasing order, so the first is the lowest. At most the credit (the prefetch).
   */
  readonly #open = new Set<number>();
  #last: number | undefined;

  delivered(message: ConsumeMessage): void {
    const offset = offsetOf(message);
    if (offset === undefined) return;
    this.#open.add(offset);
    this.#last = offset;
  }

  settled(message: ConsumeMessage): void {
    const offset = offsetOf(message);
    if (offset !== undefined) this.#open.delete(offset);
  }

  /**
   * Where a consumer after this run starts, keeping at-least-once: the lowest offset handed over
   * and not settled (its handling did not finish, so it is delivered again, with what came after
   * it), else one past the last one handed over; undefined when nothing came.
   */
  get resumeAt(): number | undefined {
    for (const offset of this.#open) return offset;
    return this.#last === undefined ? undefined : this.#last + 1;
  }
}

/** The offset RabbitMQ puts on each delivery of a stream (amqplib reads the long as a number). */
export function offsetOf(message: ConsumeMessage): number | undefined {
  const offset = message.properties.headers?.["x-stream-offset"];
  return typeof offset === "number" ? offset : undefined;
}

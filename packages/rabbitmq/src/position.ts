import type { Position } from "@ruststream/core";

/**
 * Where a delivery sits: its queue and the order it arrived in on this subscription (a queue keeps
 * no offsets a consumer could return to); on a stream queue, the message's offset in the stream.
 */
export class RabbitPosition implements Position {
  readonly broker = "rabbitmq";
  readonly queue: string;
  /** The arrival on this subscription, from 1. */
  readonly sequence: number;
  /** The stream offset, on a stream queue. */
  readonly offset: bigint | undefined;

  constructor(queue: string, sequence: number, offset?: bigint) {
    this.queue = queue;
    this.sequence = sequence;
    this.offset = offset;
  }

  toString(): string {
    return this.offset === undefined
      ? `${this.queue}#${this.sequence}`
      : `${this.queue}@${this.offset}`;
  }
}

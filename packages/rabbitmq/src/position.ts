import { type Position, RustStreamError } from "@ruststream/core";
import { epochMs } from "@ruststream/core/broker";

/**
 * Where a delivery sits: its queue and the order it arrived in on this subscription (a queue keeps
 * no offsets a consumer could return to); on a stream queue, the message's offset in the stream.
 */
export class RabbitPosition implements Position {
  readonly broker = "rabbitmq";
  readonly queue: string;
  /** The arrival on this subscription, from 1 (0 for a position read back from text). */
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

/**
 * A time on a stream queue: a seek to it reads from the first message the stream stored at or
 * after it (to the second: AMQP's timestamp, what `x-stream-offset` takes), or from the next one
 * written when the stream holds nothing that late.
 */
export class RabbitStreamTimePosition implements Position {
  readonly broker = "rabbitmq";
  readonly time: Date;

  constructor(time: Date | number) {
    this.time = new Date(epochMs("a stream time position", time));
  }

  toString(): string {
    return `time:${this.time.getTime()}`;
  }
}

/** What a stream subscription seeks to: a delivery's position (its offset), or a time. */
export type RabbitStreamSeekPosition = RabbitPosition | RabbitStreamTimePosition;

/** Whether `value` is a position a stream subscription seeks to. */
export function isRabbitStreamSeekPosition(value: unknown): value is RabbitStreamSeekPosition {
  return (
    (value instanceof RabbitPosition && value.offset !== undefined) ||
    value instanceof RabbitStreamTimePosition
  );
}

/** Reads back `position.toString()` of a stream position: `<queue>@<offset>` or `time:<ms>`. */
export function parseRabbitStreamPosition(text: string): RabbitStreamSeekPosition {
  const time = /^time:(\d+)$/.exec(text);
  if (time !== null) return new RabbitStreamTimePosition(Number(time[1]));
  const at = text.lastIndexOf("@");
  const offset = text.slice(at + 1);
  if (at <= 0 || !/^\d+$/.test(offset)) {
    throw new RustStreamError(
      "invalid-argument",
      `"${text}" is not a stream position: give what a delivery's position.toString() wrote (<queue>@<offset>) or time:<ms>`,
    );
  }
  return new RabbitPosition(text.slice(0, at), 0, BigInt(offset));
}

import { type Position, RustStreamError } from "@ruststream/core";
import { epochMs } from "@ruststream/core/broker";

/**
 * Where a core NATS delivery sits: its arrival number on its subscription. Core NATS keeps
 * nothing, so there is nothing to seek to.
 */
export class NatsArrivalPosition implements Position {
  readonly broker = "nats";
  readonly kind = "arrival" as const;
  readonly arrival: bigint;

  constructor(arrival: bigint) {
    this.arrival = arrival;
  }

  toString(): string {
    return `arrival:${this.arrival}`;
  }
}

/**
 * Where a JetStream delivery sits: its stream and stream sequence (`<stream>:<sequence>`, the
 * sequence a bigint: JetStream counts in 64 bits). The consumer that delivered it rides along for
 * a dead letter's headers, never in the text.
 */
export class JetStreamPosition implements Position {
  readonly broker = "nats";
  readonly kind = "stream" as const;
  readonly stream: string;
  readonly sequence: bigint;
  readonly consumer: string | undefined;

  constructor(stream: string, sequence: bigint, consumer?: string) {
    if (stream === "" || sequence < 1n) {
      throw new RustStreamError(
        "invalid-argument",
        `a JetStream position needs a stream name and a sequence of 1 or more, not "${stream}" and ${sequence}`,
      );
    }
    this.stream = stream;
    this.sequence = sequence;
    this.consumer = consumer;
  }

  toString(): string {
    return `${this.stream}:${this.sequence}`;
  }
}

/**
 * A time: a seek to it moves a JetStream subscription to the first message the stream stored at or
 * after it.
 */
export class JetStreamTimePosition implements Position {
  readonly broker = "nats";
  readonly kind = "time" as const;
  readonly time: Date;

  constructor(time: Date | number) {
    this.time = new Date(epochMs("a JetStream time position", time));
  }

  toString(): string {
    return `time:${this.time.getTime()}`;
  }
}

/** What a JetStream subscription seeks to: a stream sequence, or a time. */
export type JetStreamSeekPosition = JetStreamPosition | JetStreamTimePosition;

/** Whether `value` is a position a JetStream subscription seeks to. */
export function isJetStreamSeekPosition(value: unknown): value is JetStreamSeekPosition {
  return value instanceof JetStreamPosition || value instanceof JetStreamTimePosition;
}

/** Reads a JetStream position back from `toString()`'s text. */
export function parseJetStreamPosition(text: string): JetStreamSeekPosition {
  const time = /^time:(\d+)$/.exec(text);
  if (time) return new JetStreamTimePosition(Number(time[1]));
  const at = /^(.+):(\d+)$/.exec(text);
  if (at) return new JetStreamPosition(at[1] as string, BigInt(at[2] as string));
  throw new RustStreamError(
    "invalid-argument",
    `"${text}" is not a JetStream position: expected "<stream>:<sequence>" or "time:<ms since the epoch>"`,
  );
}

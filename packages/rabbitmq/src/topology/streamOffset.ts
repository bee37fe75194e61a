import type { Table } from "./topology.js";

/** Where a stream consumer starts: the first message kept, the last, the next, an offset, a time. */
export type StreamOffset = "first" | "last" | "next" | number | bigint | Date;

/** The `basic.consume` arguments that start a stream consumer at `offset`. */
export function streamOffsetArgument(offset: StreamOffset): Table {
  // A time goes as AMQP's timestamp, in seconds (amqplib's `!` names the field type); an offset as
  // a number (amqplib writes a 64-bit integer for one past 32 bits).
  const value =
    offset instanceof Date
      ? { "!": "timestamp", value: Math.floor(offset.getTime() / 1000) }
      : typeof offset === "bigint"
        ? Number(offset)
        : offset;
  return { "x-stream-offset": value };
}

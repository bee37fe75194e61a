import type { Position } from "@ruststream/core";

/**
 * Where a delivery sits: its arrival number on its subscription. A channel keeps nothing, so there
 * is nothing to seek to; a broker with a log keeps the log's offset here, as a `bigint`.
 */
export class ChannelPosition implements Position {
  readonly broker = "channels";
  readonly arrival: bigint;

  constructor(arrival: bigint) {
    this.arrival = arrival;
  }

  toString(): string {
    return this.arrival.toString();
  }
}

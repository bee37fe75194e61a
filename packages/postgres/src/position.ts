import type { Position } from "@ruststream/core";

/** Where a delivery sits: its row's id in the queue table (a `bigint`, as PostgreSQL's). */
export class PostgresQueuePosition implements Position {
  readonly broker = "postgres";
  readonly id: bigint;

  constructor(id: bigint) {
    this.id = id;
  }

  toString(): string {
    return this.id.toString();
  }
}

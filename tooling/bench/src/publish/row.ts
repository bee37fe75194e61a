// One row of the publish bench: a client opened untimed, `count` messages published onto a fresh
// name with `depth` in flight (timed), the count checked against the broker, the client closed.
import type { Timed } from "./window.js";

export interface PublishRow {
  /** Printed, and the key of its results. */
  readonly name: string;
  /** Which broker's table it belongs to. */
  readonly broker: string;
  /** A raw-client row the app rows are divided by; the first of a broker is its main baseline. */
  readonly baseline: boolean;
  /** Publishes `count` messages onto a fresh name, checks them stored; resolves with its time. */
  run(count: number, depth: number): Promise<Timed>;
}

/** Throws unless the broker holds what the row published. */
export function expectStored(row: string, where: string, stored: number, count: number): void {
  if (stored !== count) {
    throw new Error(`${row}: ${where} holds ${stored} messages after ${count} were confirmed`);
  }
}

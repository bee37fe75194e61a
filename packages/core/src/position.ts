/**
 * Where a delivery sits in its source, owned by the broker that made it. `toString()` gives a text a
 * service can store; the subscription's `parsePosition` turns it back. 64-bit offsets and sequence
 * numbers are kept as `bigint` inside, never squeezed through `number`.
 */
export interface Position {
  /** The kind of broker the position belongs to, for example `"memory"`. */
  readonly broker: string;
  toString(): string;
}

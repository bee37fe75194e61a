import { type Position, RustStreamError } from "@ruststream/core";

const MAX_SEQUENCE = (1n << 64n) - 1n;
const idPattern = /^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})$/;

/**
 * A stream entry id, `<milliseconds>-<sequence>`. Both halves are 64-bit, so they are kept as
 * `bigint` and never pass through `number`.
 */
export class RedisStreamPosition implements Position {
  readonly broker = "redis";
  readonly ms: bigint;
  readonly sequence: bigint;

  constructor(ms: bigint, sequence: bigint) {
    this.ms = ms;
    this.sequence = sequence;
  }

  toString(): string {
    return `${this.ms}-${this.sequence}`;
  }

  /** The id just before this one: `XGROUP SETID` is exclusive, so a seek sets the group there. */
  previous(): string {
    if (this.sequence > 0n) return `${this.ms}-${this.sequence - 1n}`;
    if (this.ms > 0n) return `${this.ms - 1n}-${MAX_SEQUENCE}`;
    return "0-0";
  }

  /** Reads an entry id, as `toString()` wrote it or as Redis returned it. */
  static parse(text: string): RedisStreamPosition {
    const match = idPattern.exec(text);
    const ms = match === null ? undefined : BigInt(match[1]!);
    const sequence = match === null ? undefined : BigInt(match[2]!);
    if (
      ms === undefined ||
      sequence === undefined ||
      ms > MAX_SEQUENCE ||
      sequence > MAX_SEQUENCE
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `"${text}" is not a Redis stream position: store one with position.toString() and parse that`,
      );
    }
    return new RedisStreamPosition(ms, sequence);
  }
}

export function isRedisStreamPosition(value: unknown): value is RedisStreamPosition {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Position).broker === "redis" &&
    typeof (value as RedisStreamPosition).ms === "bigint" &&
    typeof (value as RedisStreamPosition).sequence === "bigint"
  );
}

/** A position in a list or a channel, which Redis does not give: a per-subscription counter. */
export class RedisSequencePosition implements Position {
  readonly broker = "redis";
  readonly sequence: bigint;

  constructor(sequence: bigint) {
    this.sequence = sequence;
  }

  toString(): string {
    return `#${this.sequence}`;
  }
}

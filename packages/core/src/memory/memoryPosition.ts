import { RustStreamError } from "../errors.js";
import type { Position } from "../position.js";

/** A message's place in a memory topic: its sequence number, from 0. */
export class MemoryPosition implements Position {
  readonly broker = "memory";
  readonly sequence: bigint;

  constructor(sequence: bigint) {
    this.sequence = sequence;
  }

  toString(): string {
    return this.sequence.toString();
  }

  /** Reads a position stored with `toString()`. */
  static parse(text: string): MemoryPosition {
    if (!/^(0|[1-9][0-9]*)$/.test(text)) {
      throw new RustStreamError(
        "invalid-argument",
        `"${text}" is not a memory position: store one with position.toString() and parse that`,
      );
    }
    return new MemoryPosition(BigInt(text));
  }
}

export function isMemoryPosition(value: unknown): value is MemoryPosition {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Position).broker === "memory" &&
    typeof (value as MemoryPosition).sequence === "bigint"
  );
}

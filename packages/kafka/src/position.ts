import { type Position, RustStreamError } from "@ruststream/core";

/** What a {@link KafkaPosition} points at. */
export type KafkaPositionTarget =
  /** One record: a partition of a topic and an offset in it. */
  | {
      readonly kind: "offset";
      readonly topic: string;
      readonly partition: number;
      readonly offset: bigint;
    }
  /** In every partition held, the first record at or after the time. */
  | { readonly kind: "timestamp"; readonly ms: number }
  /** In every partition held, the first record still kept. */
  | { readonly kind: "beginning" }
  /** In every partition held, the next record to be written. */
  | { readonly kind: "end" };

const MAX_OFFSET = (1n << 63n) - 1n;
const offsetPattern = /^([a-zA-Z0-9._-]+):(0|[1-9][0-9]{0,9}):(0|[1-9][0-9]{0,18})$/;
const timePattern = /^time:(0|[1-9][0-9]{0,15})$/;

/**
 * Where a subscription reads from. A delivery's position is its record (`topic:partition:offset`);
 * a seek also takes a time or either end, applied to every partition the subscription holds.
 * Offsets are 64-bit, kept as `bigint`.
 */
export class KafkaPosition implements Position {
  readonly broker = "kafka";
  readonly target: KafkaPositionTarget;

  private constructor(target: KafkaPositionTarget) {
    this.target = target;
  }

  /** One record, as a delivery reports it. */
  static offset(topic: string, partition: number, offset: bigint | number): KafkaPosition {
    const value = typeof offset === "number" ? BigInt(offset) : offset;
    if (!Number.isSafeInteger(partition) || partition < 0 || value < 0n || value > MAX_OFFSET) {
      throw new RustStreamError(
        "invalid-argument",
        `KafkaPosition.offset(${topic}, ${partition}, ${value}): a partition and an offset are whole numbers, 0 or more`,
      );
    }
    return new KafkaPosition({ kind: "offset", topic, partition, offset: value });
  }

  /** The first record at or after `ms` (milliseconds since the epoch), in every partition held. */
  static timestamp(ms: number): KafkaPosition {
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new RustStreamError(
        "invalid-argument",
        `KafkaPosition.timestamp(${ms}): give milliseconds since the epoch, 0 or more`,
      );
    }
    return new KafkaPosition({ kind: "timestamp", ms });
  }

  /** The oldest record still kept, in every partition held. */
  static beginning(): KafkaPosition {
    return new KafkaPosition({ kind: "beginning" });
  }

  /** After the last record, in every partition held: only what is published from now on. */
  static end(): KafkaPosition {
    return new KafkaPosition({ kind: "end" });
  }

  toString(): string {
    const t = this.target;
    switch (t.kind) {
      case "offset":
        return `${t.topic}:${t.partition}:${t.offset}`;
      case "timestamp":
        return `time:${t.ms}`;
      case "beginning":
        return "beginning";
      case "end":
        return "end";
    }
  }

  /** Reads a position back from `toString()`. */
  static parse(text: string): KafkaPosition {
    if (text === "beginning") return KafkaPosition.beginning();
    if (text === "end") return KafkaPosition.end();
    const time = timePattern.exec(text);
    if (time !== null) return KafkaPosition.timestamp(Number(time[1]));
    const match = offsetPattern.exec(text);
    if (match !== null && BigInt(match[3]!) <= MAX_OFFSET && Number(match[2]) <= 0x7fffffff) {
      return KafkaPosition.offset(match[1]!, Number(match[2]), BigInt(match[3]!));
    }
    throw new RustStreamError(
      "invalid-argument",
      `"${text}" is not a Kafka position: store one with position.toString() and parse that ("topic:partition:offset", "time:<ms>", "beginning" or "end")`,
    );
  }
}

export function isKafkaPosition(value: unknown): value is KafkaPosition {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Position).broker === "kafka" &&
    typeof (value as KafkaPosition).target === "object"
  );
}

import { type Position, RustStreamError } from "@ruststream/core";
import { epochMs } from "@ruststream/core/broker";
import { MessageId } from "./wire/messageId.js";

const RETRY_PREFIX = "retry:";
const TIME_PREFIX = "time:";

/**
 * Where a delivery sits: its message id (`ledger:entry:partition:batchIndex`, 64-bit halves as
 * bigint). A delivery read from the subscription's retry topic says so (`retry:` before the id),
 * so a seek to it moves that topic, not the source.
 */
export class PulsarMessagePosition implements Position {
  readonly broker = "pulsar";
  readonly kind = "message" as const;
  readonly messageId: MessageId;
  /** True when the id is in the subscription's retry topic. */
  readonly retry: boolean;

  constructor(messageId: MessageId, options: { readonly retry?: boolean } = {}) {
    this.messageId = messageId;
    this.retry = options.retry ?? false;
  }

  toString(): string {
    return `${this.retry ? RETRY_PREFIX : ""}${this.messageId.toString()}`;
  }
}

/**
 * A publish time (ms since the epoch): a seek to it moves the subscription, on every partition and
 * its retry topic, to the first message published at or after it.
 */
export class PulsarTimePosition implements Position {
  readonly broker = "pulsar";
  readonly kind = "time" as const;
  readonly publishTime: number;

  constructor(publishTime: number | Date) {
    this.publishTime = epochMs("a Pulsar time position", publishTime);
  }

  toString(): string {
    return `${TIME_PREFIX}${this.publishTime}`;
  }
}

/** What a Pulsar subscription seeks to: a message, or a publish time. */
export type PulsarPosition = PulsarMessagePosition | PulsarTimePosition;

/** Reads a position back from `toString()`'s text. */
export function parsePulsarPosition(text: string): PulsarPosition {
  if (text.startsWith(TIME_PREFIX)) {
    const digits = text.slice(TIME_PREFIX.length);
    if (!/^\d{1,16}$/.test(digits)) throw notAPosition(text);
    return new PulsarTimePosition(Number(digits));
  }
  const retry = text.startsWith(RETRY_PREFIX);
  const id = retry ? text.slice(RETRY_PREFIX.length) : text;
  let messageId: MessageId;
  try {
    messageId = MessageId.parse(id);
  } catch {
    throw notAPosition(text);
  }
  return new PulsarMessagePosition(messageId, { retry });
}

function notAPosition(text: string): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `${JSON.stringify(text)} is not a Pulsar position: store one with position.toString() (ledger:entry:partition:batchIndex, retry:<id> or time:<ms>) and parse that`,
  );
}

/** A Pulsar position of any copy of this package, by its shape (never `instanceof`). */
export function isPulsarPosition(value: unknown): value is PulsarPosition {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  if (p.broker !== "pulsar") return false;
  return p.kind === "time"
    ? typeof p.publishTime === "number"
    : p.kind === "message" && typeof p.messageId === "object";
}

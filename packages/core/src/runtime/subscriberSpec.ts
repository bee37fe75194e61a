import type { Codec } from "../codec/codec.js";
import type { CodecsByType } from "../codec/codecsByType.js";
import type { Source } from "../source.js";
import type { StandardSchemaV1 } from "./standardSchema.js";

/** What to do when a handler throws (or its reply cannot be encoded or published). */
export type ErrorPolicy =
  /** Retry with a bounded backoff until `maxAttempts`, then dead-letter if declared, else drop. */
  | "retry"
  | "drop"
  /** Dead-letter at once (dropped, with a warning, when no dead letter is declared). */
  | "dead-letter"
  /** Leave the delivery unsettled and stop the app: `run()` exits non-zero. */
  | "fail-fast";

/** What to do with a payload that does not decode or a message its schema rejects. */
export type DecodePolicy = "drop" | "dead-letter" | "fail-fast";

export interface Backoff {
  /** The delay before the second delivery (default 100 ms); it doubles after each attempt. */
  readonly initialMs?: number;
  /** The longest delay (default 10 s). */
  readonly maxMs?: number;
}

export interface FailurePolicy {
  /** Default `"retry"`. */
  readonly error?: ErrorPolicy;
  /** Default: `"dead-letter"` where a dead letter is declared, else `"drop"`. */
  readonly decode?: DecodePolicy;
  readonly backoff?: Backoff;
}

/**
 * A key for keyed lanes: `"partitionKey"`, the key the message was published with; `"partition"`,
 * the broker partition the delivery came from (Kafka, partitioned Pulsar topics); or a function that
 * computes one from the decoded message.
 */
export type KeyOf<TMessage> =
  | "partitionKey"
  | "partition"
  | ((message: TMessage) => string | number | Uint8Array);

export type ErasedKey =
  | "partitionKey"
  | "partition"
  | ((message: unknown) => string | number | Uint8Array);

/** Everything one mount declared; the runtime reads it at startup. */
export interface SubscriberSpec {
  readonly source: string | Source;
  name: string | undefined;
  readonly schema: StandardSchemaV1 | undefined;
  readonly codec: Codec<unknown>;
  /** The codecs a delivery's content-type may name besides the codec's, when given. */
  readonly codecs: CodecsByType | undefined;
  reply: { readonly destination: string | undefined } | undefined;
  outs: Readonly<
    Record<string, { readonly name: string; readonly codec: Codec<unknown> | undefined }>
  >;
  workers: number;
  key: ErasedKey | undefined;
  maxAttempts: number | undefined;
  deadLetter: string | undefined;
  failure: FailurePolicy;
  batch: number | undefined;
  prefetch: number | undefined;
  handler: ((message: never, ctx: never) => unknown) | undefined;
}

/** The cap when a mount names none: a thrown error gets two more tries. */
export const defaultMaxAttempts = 3;

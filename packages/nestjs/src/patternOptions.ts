import {
  type Codec,
  type FailurePolicy,
  type KeyOf,
  RustStreamError,
  type Source,
  type StandardSchemaV1,
} from "@ruststream/core";

/**
 * What a RustStream subscriber takes, for one Nest pattern: given on the strategy as defaults for
 * every pattern, and per pattern in the decorator's extras,
 * `@EventPattern("orders", { ruststream: { maxAttempts: 5, deadLetter: "orders-dlq" } })`.
 */
export interface PatternOptions {
  /** Deliveries one message gets before it is given up on (default 3). */
  readonly maxAttempts?: number;
  /** Where a message goes, as it arrived and with its origin, once given up on. */
  readonly deadLetter?: string;
  /** Handlers run at once; with `key`, in lanes that keep each key's messages in order. */
  readonly workers?: number;
  /** `"partitionKey"`, `"partition"` or a function of the payload: one lane per key at a time. */
  readonly key?: KeyOf<unknown>;
  /** What a failure does (retry with backoff by default), and the backoff. */
  readonly failure?: FailurePolicy;
  /** Deliveries pulled ahead of the handler (default 256). */
  readonly prefetch?: number;
  /** Decodes the payload (default JSON). */
  readonly codec?: Codec<unknown>;
  /** A Standard Schema validator: a payload it rejects never reaches the handler. */
  readonly schema?: StandardSchemaV1;
}

/** Per pattern only: where the messages are read from, when it is not the pattern itself. */
export interface PatternSource {
  /** A name or one of the broker's descriptors (a `RedisStream` with its own group, say). */
  readonly source?: string | Source;
}

/** The options of one pattern's extras (`extras.ruststream`). */
export type PatternExtras = PatternOptions & PatternSource;

const optionKeys: readonly (keyof PatternExtras)[] = [
  "maxAttempts",
  "deadLetter",
  "workers",
  "key",
  "failure",
  "prefetch",
  "codec",
  "schema",
  "source",
];

/**
 * Reads `extras.ruststream` of one pattern; a key it does not know is refused (a misspelt
 * `maxAttempt` would otherwise be a silent default).
 */
export function readPatternExtras(
  pattern: string,
  extras: Readonly<Record<string, unknown>> | undefined,
): PatternExtras {
  const given = extras?.ruststream;
  if (given === undefined) return {};
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new RustStreamError(
      "invalid-argument",
      `pattern ${pattern}: extras.ruststream must be an object of subscriber options (${optionKeys.join(", ")})`,
    );
  }
  assertKnownKeys(`pattern ${pattern}: extras.ruststream`, given);
  return given as PatternExtras;
}

/** Refuses what is not a subscriber option, naming the ones there are. */
export function assertKnownKeys(where: string, options: object): void {
  for (const key of Object.keys(options)) {
    if (!(optionKeys as readonly string[]).includes(key)) {
      throw new RustStreamError(
        "invalid-argument",
        `${where}: unknown option "${key}"; the options are ${optionKeys.join(", ")}`,
      );
    }
  }
}

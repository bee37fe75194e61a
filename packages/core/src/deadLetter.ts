import { RustStreamError } from "./errors.js";
import type { HeaderMap, ReadonlyHeaderMap } from "./headerMap.js";

/**
 * Where a dead-lettered message came from. The runtime stamps it on the copy it sends to a dead letter;
 * each broker writes it with its own header names (Kafka: `kafka-dlq-source-topic`, ...) so a Rust
 * service reading the same dead-letter topic understands it.
 */
export interface DeadLetterOrigin {
  /** The topic, stream or queue the message was consumed from. */
  readonly source: string;
  /** The source partition, where the broker has partitions. */
  readonly partition?: number;
  /** The message's serialised position in the source. */
  readonly position?: string;
  /** Why it was dead-lettered, for people: "max-attempts", "decode", or the handler's reason. */
  readonly reason: string;
}

/** The header names one broker uses for the fields of a {@link DeadLetterOrigin}. */
export interface DeadLetterHeaderNames {
  readonly source: string;
  readonly partition: string;
  readonly position: string;
  readonly reason: string;
}

/** Core's names, for brokers that have none of their own. */
export const deadLetterHeaderNames: DeadLetterHeaderNames = {
  source: "x-ruststream-dlq-source",
  partition: "x-ruststream-dlq-partition",
  position: "x-ruststream-dlq-position",
  reason: "x-ruststream-dlq-reason",
};

/** Stamps an origin onto outgoing headers under a broker's names. */
export function writeDeadLetterOrigin(
  headers: HeaderMap,
  origin: DeadLetterOrigin,
  names: DeadLetterHeaderNames = deadLetterHeaderNames,
): HeaderMap {
  headers.set(names.source, origin.source);
  if (origin.partition !== undefined) headers.set(names.partition, String(origin.partition));
  if (origin.position !== undefined) headers.set(names.position, origin.position);
  return headers.set(names.reason, origin.reason);
}

/** Reads an origin back, or `undefined` when the message carries none. */
export function readDeadLetterOrigin(
  headers: ReadonlyHeaderMap,
  names: DeadLetterHeaderNames = deadLetterHeaderNames,
): DeadLetterOrigin | undefined {
  const source = headers.getString(names.source);
  if (source === undefined) return undefined;
  const partitionText = headers.getString(names.partition);
  const partition = partitionText === undefined ? undefined : Number(partitionText);
  if (partition !== undefined && !Number.isSafeInteger(partition)) {
    throw new RustStreamError(
      "invalid-argument",
      `the dead-letter partition header "${names.partition}" holds "${partitionText}", not an integer`,
    );
  }
  const position = headers.getString(names.position);
  return {
    source,
    reason: headers.getString(names.reason) ?? "",
    ...(partition === undefined ? {} : { partition }),
    ...(position === undefined ? {} : { position }),
  };
}

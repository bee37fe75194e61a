import type { Bindings } from "./bindings.js";
import { sourceMark } from "./marks.js";

/**
 * What a broker-moved retry asks of the broker. Both halves, or neither: a broker refuses half a
 * declaration when subscribing, since a cap with nowhere to go (or a dead letter no cap ever reaches)
 * is a configuration mistake.
 */
export interface RetryDeclaration {
  /** Deliveries before the broker moves the message to `deadLetter`. */
  readonly maxAttempts?: number;
  /** Where the broker moves it. */
  readonly deadLetter?: string;
}

interface SourceBase {
  /** The kind of broker that understands this descriptor, for example `"memory"`. */
  readonly [sourceMark]: string;
  /** The topic, stream or queue. */
  readonly name: string;
  /**
   * `false` where deliveries from this source can never carry a partition key, so the runtime
   * refuses keyed lanes without a key function at startup instead of running them on one lane.
   * Absent means they can.
   */
  readonly carriesPartitionKey?: boolean;
  /**
   * `true` where deliveries report the broker partition they came from (`Delivery.partition`):
   * Kafka topics, partitioned Pulsar topics. Keyed lanes by partition are refused elsewhere at
   * startup. Absent means they do not.
   */
  readonly partitions?: boolean;
  /** Per-broker facts for generated docs (a consumer group, a subscription type); see `Bindings`. */
  readonly bindings?: Bindings | undefined;
}

/** This process republishes retry copies, and the descriptor knows the address they go to. */
export interface AddressedSource extends SourceBase {
  readonly copies: "addressed";
  /** The name a retry copy is published to so that this source receives it again. */
  readonly redeliveryAddress: string;
}

/**
 * This process republishes retry copies, but cannot address them (a pattern, a list of topics): the
 * mount has to name where copies go.
 */
export interface NamedSource extends SourceBase {
  readonly copies: "named";
}

/**
 * The broker moves failing deliveries itself (a redrive policy, a delivery limit with a dead-letter
 * exchange). The cap and the dead letter reach it through {@link BrokerMovesSource.declareRetry}.
 */
export interface BrokerMovesSource extends SourceBase {
  readonly copies: "broker";
  /** The declaration this descriptor carries, if any. */
  readonly retry: RetryDeclaration | undefined;
  /** A copy of this descriptor carrying `declaration`. */
  declareRetry(declaration: RetryDeclaration): BrokerMovesSource;
}

/**
 * A subscription descriptor: where to read from, and where retry copies go. Descriptors are plain
 * configuration: building one does no I/O, and one descriptor may be subscribed many times.
 */
export type Source = AddressedSource | NamedSource | BrokerMovesSource;

/** How retry copies travel for a source. */
export type CopyPath = Source["copies"];

/** True for a descriptor from any broker package, whichever copy of core built it. */
export function isSource(value: unknown): value is Source {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { [sourceMark]?: unknown })[sourceMark] === "string"
  );
}

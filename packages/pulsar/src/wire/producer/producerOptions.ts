// What a producer is asked for, and what one message to send carries.
import type { ProducerAccessMode } from "../commands/enums.js";
import type { Compression } from "../compression.js";
import type { HashingScheme } from "../murmur3.js";

/** One message to send. */
export interface OutgoingMessage {
  readonly payload: Uint8Array;
  /** The message key: routes it to a partition, and on Key_Shared to a consumer. */
  readonly key?: string;
  /** Overrides the key for Key_Shared routing only. */
  readonly orderingKey?: Uint8Array;
  readonly properties?: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
  /** Milliseconds since the epoch, the application's own time for the message. */
  readonly eventTime?: number;
  /** Deliver no earlier than this (ms since the epoch); Shared and Key_Shared subscriptions honour it. Sent unbatched. */
  readonly deliverAt?: number;
  /** On a partitioned topic, send to this partition instead of routing by key. */
  readonly partition?: number;
}

/** Batching: messages sent close together travel as one broker entry. */
export interface BatchingOptions {
  /** At most this many messages per batch (default 1000). */
  readonly maxMessages?: number;
  /** At most this many payload bytes per batch, before compression (default 128 KiB). */
  readonly maxBytes?: number;
  /** A batch is sent at the latest this long after its first message (default 1 ms). */
  readonly maxDelayMs?: number;
  /**
   * One batch per key (default false), for Key_Shared subscriptions: the broker routes a whole entry
   * by one key, so a mixed-key batch would reach one consumer.
   */
  readonly keyBased?: boolean;
}

export interface ProducerOptions {
  readonly topic: string;
  /** A name for the producer; the broker assigns one when absent. Deduplication keys on it. */
  readonly producerName?: string;
  readonly accessMode?: keyof typeof ProducerAccessMode;
  /** `false` sends each message as its own entry. Default: batching with the defaults above. */
  readonly batching?: false | BatchingOptions;
  readonly compression?: Compression;
  /** How keys choose partitions (default JavaStringHash, the Java client's default). */
  readonly hashingScheme?: HashingScheme;
  /** A send not confirmed within this fails with `timeout` (default 30 s; 0: never). */
  readonly sendTimeoutMs?: number;
  /** Creates this subscription with the topic, so nothing sent is lost before a consumer comes. */
  readonly initialSubscriptionName?: string;
  /** Producer metadata, shown in the topic's stats. */
  readonly properties?: Readonly<Record<string, string>>;
}

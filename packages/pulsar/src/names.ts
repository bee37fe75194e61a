import { RustStreamError } from "@ruststream/core";
import { parseTopicName } from "./wire/topicName.js";

/**
 * The names this broker writes on Pulsar's wire. The partition key is the message's own key
 * (`MessageMetadata.partition_key`), never a property. A dead-lettered copy carries core's origin
 * headers (`x-ruststream-dlq-source`, `-partition`, `-position`, `-reason`) and, for Pulsar's own
 * clients (Java, Go) and tools, the properties they write on a dead letter.
 */
export const pulsarProperties = {
  /** The topic a dead-lettered message was consumed from (a partition's name where partitioned). */
  realTopic: "REAL_TOPIC",
  /** Its message id there, `ledger:entry:partition:batchIndex`. */
  originMessageId: "ORIGIN_MESSAGE_ID",
} as const;

/**
 * The headers of a dead letter made of an entry no consumer could decode (a bad checksum, a
 * payload its codec cannot decompress, a batch that does not add up). Its payload is the entry's
 * payload as it travelled, still compressed and, for a batch, its concatenated messages; these say
 * how to read it (the wire entry's `decompress` and `readBatch`), beside core's origin headers.
 */
export const undecodableHeaders = {
  /** The entry's compression: `NONE`, `LZ4`, `ZLIB`, `ZSTD` or `SNAPPY`. */
  compression: "x-ruststream-pulsar-compression",
  /** The payload's size once decompressed, as the entry's metadata declared it. */
  uncompressedSize: "x-ruststream-pulsar-uncompressed-size",
  /** The number of messages in the batch; absent when the entry was one message. */
  batchSize: "x-ruststream-pulsar-batch-size",
} as const;

/** The suffixes of the per-subscription topics, as Pulsar's clients name them. */
export const topicSuffixes = {
  deadLetter: "-DLQ",
  retry: "-RETRY",
} as const;

/** A subscription name that can be part of a topic name, or the error that says why not. */
function topicPart(subscription: string): string {
  if (!/^[-=:.\w]+$/.test(subscription)) {
    throw new RustStreamError(
      "invalid-argument",
      `the subscription name ${JSON.stringify(subscription)} cannot be part of a topic name (its retry and dead-letter topics are <topic>-<subscription>-RETRY and -DLQ): use letters, digits and - _ . = :`,
    );
  }
  return subscription;
}

/** `<topic>-<subscription>-DLQ`, in full: Pulsar's name for a subscription's dead-letter topic. */
export function deadLetterTopic(topic: string, subscription: string): string {
  return `${parseTopicName(topic).base}-${topicPart(subscription)}${topicSuffixes.deadLetter}`;
}

/** `<topic>-<subscription>-RETRY`, in full: where a subscription's retry copies wait. */
export function retryTopic(topic: string, subscription: string): string {
  return `${parseTopicName(topic).base}-${topicPart(subscription)}${topicSuffixes.retry}`;
}

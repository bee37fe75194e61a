import { type DeadLetterHeaderNames, deadLetterHeaderNames } from "@ruststream/core/broker";

/**
 * The names RustStream's Kafka crate writes on a dead-lettered record, so a Rust service reading the
 * same dead-letter topic finds the origin where it looks: the topic, partition and offset the record
 * was consumed from. The reason has no Kafka name of its own and keeps core's.
 */
export const kafkaHeaders = {
  deadLetterTopic: "kafka-dlq-source-topic",
  deadLetterPartition: "kafka-dlq-source-partition",
  deadLetterOffset: "kafka-dlq-source-offset",
  deadLetterReason: deadLetterHeaderNames.reason,
} as const;

/** The dead-letter origin under Kafka's names, for `writeDeadLetterOrigin`. */
export const kafkaDeadLetterNames: DeadLetterHeaderNames = {
  source: kafkaHeaders.deadLetterTopic,
  partition: kafkaHeaders.deadLetterPartition,
  position: kafkaHeaders.deadLetterOffset,
  reason: kafkaHeaders.deadLetterReason,
};

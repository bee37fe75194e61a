import { type DeadLetterHeaderNames, deadLetterHeaderNames } from "@ruststream/core/broker";

/**
 * The names this broker writes on NATS's wire, RustStream's own (`ruststream-nats`), so a Rust
 * service on the same subjects reads them: the partition key travels in a header of its own, and a
 * dead-lettered copy carries core's origin headers (`x-ruststream-dlq-source`: the subject,
 * `-position`: `<stream>:<stream sequence>`, `-reason`) and, from a JetStream consumer, the
 * consumer's name.
 */
export const natsHeaderNames = {
  /** The key keyed lanes read, as the Rust crate writes it. */
  partitionKey: "nats-partition-key",
  /** The JetStream consumer a dead-lettered message was delivered by. */
  deadLetterConsumer: "x-ruststream-dlq-consumer",
} as const;

/** Core's dead-letter header names: the other brokers' and RustStream's. */
export const natsDeadLetterHeaderNames: DeadLetterHeaderNames = deadLetterHeaderNames;

/** JetStream's own publish headers (the server reads them), as NATS names them. */
export const jetStreamHeaders = {
  msgId: "Nats-Msg-Id",
  expectedStream: "Nats-Expected-Stream",
  expectedLastSequence: "Nats-Expected-Last-Sequence",
  expectedLastSubjectSequence: "Nats-Expected-Last-Subject-Sequence",
  expectedLastMsgId: "Nats-Expected-Last-Msg-Id",
} as const;

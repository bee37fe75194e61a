// @ruststream/pulsar/wire: the Pulsar binary protocol in TypeScript, usable without the framework.
// What a user of the client needs, and no more: the client and its options, producers and
// consumers with their options and what they hand back, message ids, errors, the token option (TLS
// takes core's TlsOptions), and the compression kinds with their codecs (an undecodable entry is handed over as it
// travelled: compressed, its metadata naming the codec by number). The protocol's pieces stay
// inside (the broker layer of this package reaches them through its own imports).
//   client.ts           PulsarClient, ClientOptions
//   producer/           Producer and PartitionProducer, their options, one message to send
//   consumer/           Consumer and PartitionConsumer, their options, Message
//   messageId.ts        MessageId
//   errors.ts           PulsarServerError (every failure is a RustStreamError; its cause for a server's),
//                       DecodeError (bytes that cannot be decoded, what decompress throws for them)
//   undecodable.ts      what a consumer does with an entry it cannot decode
//   compression.ts      the codecs, by name (Compression) and by the protocol's number
export type { BackoffOptions } from "./backoff.js";
export { type ClientOptions, PulsarClient } from "./client.js";
export { CompressionType } from "./commands/enums.js";
export type { MessageMetadata } from "./commands/shapes.js";
export { type Compression, compress, decompress, loadCodecs } from "./compression.js";
export type { TokenSource } from "./connection.js";
export { Consumer } from "./consumer/consumer.js";
export type { ConsumerOptions, SubscriptionType } from "./consumer/consumerOptions.js";
export { Message } from "./consumer/message.js";
export { PartitionConsumer } from "./consumer/partitionConsumer.js";
export { DecodeError, PulsarServerError } from "./errors.js";
export { MessageId } from "./messageId.js";
export type { HashingScheme } from "./murmur3.js";
export { PartitionProducer } from "./producer/partitionProducer.js";
export { Producer } from "./producer/producer.js";
export type {
  BatchingOptions,
  OutgoingMessage,
  ProducerOptions,
} from "./producer/producerOptions.js";
export type {
  UndecodableEntry,
  UndecodableHandler,
  UndecodableReason,
} from "./undecodable.js";

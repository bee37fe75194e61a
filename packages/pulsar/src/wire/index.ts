// @ruststream/pulsar/wire: the Pulsar binary protocol in TypeScript, usable without the framework.
export type { BackoffOptions } from "./backoff.js";
export { type BatchEntry, encodeBatchEntry, readBatch } from "./batch.js";
export { type ClientOptions, PulsarClient } from "./client.js";
export {
  baseCommand,
  messageIdData,
  messageMetadata,
  singleMessageMetadata,
} from "./commands/codec.js";
export {
  AckType,
  CommandType,
  CompressionType,
  InitialPosition,
  KeySharedMode,
  LookupType,
  ServerError,
  SubType,
  serverErrorName,
} from "./commands/enums.js";
export type {
  BaseCommand,
  MessageIdData,
  MessageMetadata,
  SingleMessageMetadata,
} from "./commands/shapes.js";
export { type Compression, compress, decompress, loadCodecs } from "./compression.js";
export {
  CLIENT_VERSION,
  Connection,
  type ConnectionSettings,
  PROTOCOL_VERSION,
  type TokenSource,
} from "./connection.js";
export { Consumer } from "./consumer/consumer.js";
export type { ConsumerOptions, SubscriptionType } from "./consumer/consumerOptions.js";
export { Message } from "./consumer/message.js";
export { PartitionConsumer } from "./consumer/partitionConsumer.js";
export { crc32c } from "./crc32c.js";
export { isRetriable, PulsarServerError } from "./errors.js";
export {
  DEFAULT_MAX_MESSAGE_SIZE,
  decodeFrame,
  encodeCommandFrame,
  encodeMessageSection,
  encodePayloadFrame,
  FRAME_PADDING,
  type Frame,
  FrameError,
  FrameReader,
  MAGIC_BROKER_ENTRY_METADATA,
  MAGIC_CRC32C,
  type PayloadSection,
} from "./frame.js";
export {
  DEFAULT_MAX_REDIRECTS,
  type LookupResult,
  lookupTopic,
  partitionedTopicMetadata,
} from "./lookup.js";
export { lz4CompressBlock, lz4DecompressBlock } from "./lz4.js";
export { MessageId } from "./messageId.js";
export {
  type HashingScheme,
  javaStringHashCode,
  keyHash,
  murmur3_32,
  partitionForKey,
} from "./murmur3.js";
export { PartitionProducer } from "./producer/partitionProducer.js";
export { Producer } from "./producer/producer.js";
export type {
  BatchingOptions,
  OutgoingMessage,
  ProducerOptions,
} from "./producer/producerOptions.js";
export { type BrokerAddress, parseBrokerUrl, parseServiceUrl } from "./serviceUrl.js";
export type { PulsarTlsOptions } from "./tlsOptions.js";
export {
  parseTopicName,
  partitionTopicName,
  type TopicDomain,
  type TopicName,
} from "./topicName.js";
export type {
  UndecodableEntry,
  UndecodableHandler,
  UndecodableReason,
} from "./undecodable.js";

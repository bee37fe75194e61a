// @ruststream/core: what a service author uses. What only a broker package (or a test harness)
// needs is the second entry, @ruststream/core/broker (brokerEntry.ts).
export type { Bindings, JsonValue } from "./bindings.js";
export type {
  AppInfo,
  BackgroundListener,
  Broker,
  ClosedBroker,
  ConnectedBroker,
  ConnectionChange,
  ConnectionListener,
  ConnectionState,
  ConnectOptions,
} from "./broker/contract.js";
export type {
  BacklogCounts,
  BacklogState,
  BatchSubscription,
  DescribesServer,
  PositionOf,
  Requester,
  RequestOptions,
  SeekableSubscription,
  Transaction,
  TransactionalPublisher,
} from "./capabilities.js";
export {
  supportsBatches,
  supportsDescribeServer,
  supportsRequest,
  supportsSeek,
  supportsTransactions,
} from "./capabilities.js";
export type { Clock, ClockTimer } from "./clock.js";
export { ManualClock, systemClock } from "./clock.js";
export { bytes } from "./codec/bytes.js";
export type { Codec, DecodedBy } from "./codec/codec.js";
export type { JsonLimits } from "./codec/json.js";
export { json, jsonCodec } from "./codec/json.js";
export type { CommitMode } from "./commitMode.js";
export type { DeadLetterOrigin } from "./deadLetter.js";
export { readDeadLetterOrigin } from "./deadLetter.js";
export type { Delivery, NackOptions, SettleAnswer, SettleResult } from "./delivery.js";
export type { ErrorCode } from "./errors.js";
export { isRustStreamError, RustStreamError } from "./errors.js";
export type { HeaderInit, HeaderValue, ReadonlyHeaderMap } from "./headerMap.js";
export { HeaderMap } from "./headerMap.js";
export { headerNames, readRetryCount } from "./headerNames.js";
export type {
  ConsoleLoggerOptions,
  LineLoggerOptions,
  LogEntry,
  LogFields,
  Logger,
  LogLevel,
  LogMethod,
} from "./logger.js";
export { consoleLogger, lineLogger, silentLogger } from "./logger.js";
export { MemoryBroker } from "./memory/memoryBroker.js";
export type { ClosedMemoryBroker, ConnectedMemoryBroker } from "./memory/memoryConnection.js";
export type { MemoryDelivery } from "./memory/memoryDelivery.js";
export type { MemoryBrokerOptions } from "./memory/memoryOptions.js";
export { MemoryPosition } from "./memory/memoryPosition.js";
export { MemoryPublisher } from "./memory/memoryPublisher.js";
export { MemoryPublish } from "./memory/memoryPublishPolicy.js";
export type { MemorySource, MemoryTopicOptions } from "./memory/memorySources.js";
export { MemoryQueue, MemoryTopic } from "./memory/memorySources.js";
export type { MemorySubscription } from "./memory/memorySubscription.js";
export type { OutgoingMessage, RawMessage, Receipt } from "./message.js";
export type { Position } from "./position.js";
export type { Publisher, PublishPolicy } from "./publisher.js";
export type {
  RunOptions,
  RustStreamOptions,
  StartOptions,
  StartupHook,
  StopSignal,
} from "./runtime/app.js";
export { RustStream } from "./runtime/app.js";
export type {
  BackgroundFailureReport,
  BackgroundRecoveryReport,
} from "./runtime/backgroundFailureReport.js";
export type {
  CodecOptions,
  PublishOptionsOf,
  SchemaOptions,
  SourceOf,
} from "./runtime/brokerScope.js";
export { BrokerScope } from "./runtime/brokerScope.js";
export type { BatchContext, HandlerContext } from "./runtime/context.js";
export type { DeadLetterReport } from "./runtime/deadLetterReport.js";
export type {
  AppDescription,
  BrokerDescription,
  DestinationDescription,
  PayloadDescription,
  SourceDescription,
  SubscriberDescription,
} from "./runtime/description.js";
export type {
  AppStateEvent,
  BackgroundFailureEvent,
  BackgroundRecoveredEvent,
  BrokerConnectionEvent,
  DeadLetterEvent,
  DecodeFailureEvent,
  Observer,
  OutcomeEvent,
  PublishEvent,
  PublishPurpose,
  RuntimeEvent,
  SettledAs,
  SubscriptionEvent,
  WaitEvent,
} from "./runtime/events.js";
export type { HttpRouteResponse, HttpRoutes } from "./runtime/httpRoutes.js";
export type {
  BatchMiddleware,
  ConsumeMiddleware,
  Middleware,
  PublishInfo,
  PublishMiddleware,
} from "./runtime/middleware.js";
export type {
  AnyOutDeclaration,
  OutDeclaration,
  OutDeclarations,
  OutPublisher,
  OutPublishers,
  PublishOptions,
  RequestOptions as OutRequestOptions,
} from "./runtime/out.js";
export { out } from "./runtime/out.js";
export type { Outcome, OutcomeKind } from "./runtime/outcome.js";
export {
  ack,
  deadLetter,
  drop,
  isOutcome,
  retry,
  retryAfter,
  undecodable,
} from "./runtime/outcome.js";
export type { Reply } from "./runtime/reply.js";
export { reply } from "./runtime/reply.js";
export type {
  AppPublishOptions,
  AppRequestOptions,
  AppState,
  RunningApp,
  StopReport,
} from "./runtime/runningApp.js";
export type { StandardSchemaV1 } from "./runtime/standardSchema.js";
export type {
  BatchHandler,
  BatchSubscriberBuilder,
  Handler,
  SubscriberBuilder,
} from "./runtime/subscriberBuilder.js";
export type {
  Backoff,
  DecodePolicy,
  ErrorPolicy,
  FailurePolicy,
  KeyOf,
} from "./runtime/subscriberSpec.js";
export type { ServerDescription } from "./server.js";
export type {
  AddressedSource,
  BrokerMovesSource,
  CopyPath,
  NamedSource,
  RetryDeclaration,
  Source,
} from "./source.js";
export type { Subscription } from "./subscription.js";
export type { TlsOptions } from "./tls.js";

export type { Broker, ClosedBroker, ConnectedBroker } from "./broker.js";
export { brokerKind } from "./broker.js";
export type {
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
export type { CommitMode } from "./commitMode.js";
export { commitModes } from "./commitMode.js";
export { CountingCoordinator } from "./countingCoordinator.js";
export type { DeadLetterHeaderNames, DeadLetterOrigin } from "./deadLetter.js";
export {
  deadLetterHeaderNames,
  readDeadLetterOrigin,
  writeDeadLetterOrigin,
} from "./deadLetter.js";
export type { Delivery, NackOptions, SettleAnswer, SettleResult } from "./delivery.js";
export { DeliveryBase } from "./delivery.js";
export type { ErrorCode } from "./errors.js";
export { isRustStreamError, RustStreamError } from "./errors.js";
export type { HeaderInit, HeaderValue, ReadonlyHeaderMap } from "./headerMap.js";
export { HeaderMap } from "./headerMap.js";
export { headerNames, readRetryCount, writeRetryCount } from "./headerNames.js";
export type {
  Backlog,
  Coordinator,
  InProcessBroker,
  InProcessOptions,
  TestableBroker,
} from "./inProcess.js";
export { isTestableBroker, supportsInProcess } from "./inProcess.js";
export {
  batchesMark,
  brokerMark,
  deliveryMark,
  describeMark,
  inProcessMark,
  policyMark,
  requestMark,
  seekMark,
  sourceMark,
  testableMark,
  transactionsMark,
} from "./marks.js";
export type { ClosedMemoryBroker, MemoryBrokerOptions } from "./memory/memoryBroker.js";
export { ConnectedMemoryBroker, MemoryBroker } from "./memory/memoryBroker.js";
export type { MemoryDelivery } from "./memory/memoryDelivery.js";
export { MemoryPosition } from "./memory/memoryPosition.js";
export { MemoryPublish, MemoryPublisher } from "./memory/memoryPublisher.js";
export type { MemorySource, MemoryTopicOptions } from "./memory/memorySources.js";
export { MemoryQueue, MemoryTopic } from "./memory/memorySources.js";
export type { MemorySubscription } from "./memory/memorySubscription.js";
export type { OutgoingMessage, RawMessage, Receipt } from "./message.js";
export { partitionKeyBytes, snapshotMessage } from "./message.js";
export type { Position } from "./position.js";
export type { Publisher, PublishPolicy } from "./publisher.js";
export type { ServerDescription } from "./server.js";
export { hostFromUrl, withoutSecrets } from "./server.js";
export type {
  AddressedSource,
  BrokerMovesSource,
  CopyPath,
  NamedSource,
  RetryDeclaration,
  Source,
} from "./source.js";
export { isSource } from "./source.js";
export type { Subscription } from "./subscription.js";

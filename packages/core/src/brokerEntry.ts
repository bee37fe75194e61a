// @ruststream/core/broker: what a broker package and a test harness need beside the service
// author's entry (@ruststream/core): the marks a capability is found by, the delivery base, the
// in-process coordinator, and the helpers every broker would otherwise write again.

export { attemptOf, deliveriesOf } from "./attempt.js";
export { Arrivals } from "./broker/arrivals.js";
export type { ConnectionIdentity, GroupSetting, TeardownFacts } from "./broker/connectionBase.js";
export { ConnectionBase } from "./broker/connectionBase.js";
export { brokerKind } from "./broker/contract.js";
export { CountingCoordinator } from "./broker/countingCoordinator.js";
export { epochMs } from "./broker/epochMs.js";
export type { HostedSubscription, SubscriptionHost } from "./broker/hostedSubscription.js";
export type {
  Backlog,
  Coordinator,
  InProcessBroker,
  InProcessOptions,
  TestableBroker,
} from "./broker/inProcess.js";
export { isTestableBroker, noCoordinator, supportsInProcess } from "./broker/inProcess.js";
export type { LinkChange, LinkState } from "./broker/linkStates.js";
export { LinkStates } from "./broker/linkStates.js";
export type { PolicyOwner } from "./broker/pairedHost.js";
export { pairedHost } from "./broker/pairedHost.js";
export { positive } from "./broker/positive.js";
export { PullSubscription } from "./broker/pullSubscription.js";
export type { RuntimeName } from "./broker/runtime.js";
export { runtimeName, runtimeTitle } from "./broker/runtime.js";
export { SettleWatermark } from "./broker/settleWatermark.js";
export type { Injection } from "./broker/testableConnection.js";
export { TestableConnection } from "./broker/testableConnection.js";
export type { ReportsBacklog, ReportsMoves, ReportsWaits } from "./capabilities.js";
export { assertBatchSize, reportsBacklog, reportsMoves, reportsWaits } from "./capabilities.js";
export { CodecsByType, mediaType } from "./codec/codecsByType.js";
export { commitModes } from "./commitMode.js";
export type { DeadLetterHeaderNames } from "./deadLetter.js";
export { deadLetterHeaderNames, writeDeadLetterOrigin } from "./deadLetter.js";
export type { DeadLetterCopy } from "./deadLetterCopy.js";
export { deadLetterCopyOf } from "./deadLetterCopy.js";
export { DeliveryBase } from "./delivery.js";
export { writeDeadLetterRetryCount, writeRetryCount } from "./headerNames.js";
export {
  backlogMark,
  batchesMark,
  brokerMark,
  deliveryMark,
  describeMark,
  inProcessMark,
  movesMark,
  policyMark,
  requestMark,
  seekMark,
  sourceMark,
  testableMark,
  transactionsMark,
  waitsMark,
} from "./marks.js";
export { assertPayloadBytes, partitionKeyBytes, snapshotMessage, wireHeaders } from "./message.js";
export type { PendingReply, ReplyWait } from "./replyWaiters.js";
export { publishRequest, ReplyWaiters } from "./replyWaiters.js";
export { hostFromUrl, withoutSecrets } from "./server.js";
export { isSource } from "./source.js";
export { subscriptionIterator } from "./subscription.js";
export type { NodeTlsSettings, ResolvedTls } from "./tls.js";
export { nodeTlsSettings, resolveTls } from "./tls.js";
export { stageTransaction } from "./transaction.js";
export { utf8Bytes, utf8Text } from "./utf8.js";

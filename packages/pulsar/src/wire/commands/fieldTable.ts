// The Pulsar protocol's protobuf messages as a table: per message, per field, its number and type
// (PulsarApi.proto's facts: never renumber). Written for this project from the protocol; only what
// the client sends or reads is declared, and protobuf skips the rest. It is the one description of
// the messages: the codec (codec.ts) builds protobufjs's definitions from it, and the TypeScript
// shapes (shapes.ts) are derived from it, so neither can disagree with it.
//
// 64-bit integers: "uint64"/"int64" are bigint in JavaScript, for what the broker allocates (ledger
// and entry ids, sequence ids, epochs), so no id is ever rounded through a double; "uint64n"/"int64n"
// are 64-bit on the wire and numbers in JavaScript, for the ids this client allocates and
// millisecond times.

/** A scalar field type: protobuf's own, plus "uint64n"/"int64n" (64-bit on the wire, a number here). */
export type Scalar =
  | "string"
  | "bytes"
  | "bool"
  | "int32"
  | "uint32"
  | "int64"
  | "uint64"
  | "int64n"
  | "uint64n";

/** One field: its number, its type (a scalar, an enum's name or a message's name) and its rule. */
export interface FieldSpec {
  readonly id: number;
  readonly type: string;
  /** proto2's rule; absent for an optional field. */
  readonly rule?: "required" | "repeated";
}

// The field's type is kept as a literal, so shapes.ts can derive the field's TypeScript type.
const r = <T extends string>(id: number, type: T) => ({ id, type, rule: "required" }) as const;
const o = <T extends string>(id: number, type: T) => ({ id, type }) as const;
const rep = <T extends string>(id: number, type: T) => ({ id, type, rule: "repeated" }) as const;

export const MESSAGES = {
  MessageIdData: {
    ledgerId: r(1, "uint64"),
    entryId: r(2, "uint64"),
    partition: o(3, "int32"),
    batchIndex: o(4, "int32"),
    ackSet: rep(5, "int64"),
    batchSize: o(6, "int32"),
    firstChunkMessageId: o(7, "MessageIdData"),
  },
  KeyValue: { key: r(1, "string"), value: r(2, "string") },
  KeyLongValue: { key: r(1, "string"), value: r(2, "uint64") },
  IntRange: { start: r(1, "int32"), end: r(2, "int32") },
  MessageMetadata: {
    producerName: r(1, "string"),
    sequenceId: r(2, "uint64"),
    publishTime: r(3, "uint64n"),
    properties: rep(4, "KeyValue"),
    replicatedFrom: o(5, "string"),
    partitionKey: o(6, "string"),
    replicateTo: rep(7, "string"),
    compression: o(8, "CompressionType"),
    uncompressedSize: o(9, "uint32"),
    numMessagesInBatch: o(11, "int32"),
    eventTime: o(12, "uint64n"),
    encryptionAlgo: o(14, "string"),
    encryptionParam: o(15, "bytes"),
    schemaVersion: o(16, "bytes"),
    partitionKeyB64Encoded: o(17, "bool"),
    orderingKey: o(18, "bytes"),
    deliverAtTime: o(19, "int64n"),
    markerType: o(20, "int32"),
    txnidLeastBits: o(22, "uint64"),
    txnidMostBits: o(23, "uint64"),
    highestSequenceId: o(24, "uint64"),
    nullValue: o(25, "bool"),
    uuid: o(26, "string"),
    numChunksFromMsg: o(27, "int32"),
    totalChunkMsgSize: o(28, "int32"),
    chunkId: o(29, "int32"),
    nullPartitionKey: o(30, "bool"),
  },
  SingleMessageMetadata: {
    properties: rep(1, "KeyValue"),
    partitionKey: o(2, "string"),
    payloadSize: r(3, "int32"),
    compactedOut: o(4, "bool"),
    eventTime: o(5, "uint64n"),
    partitionKeyB64Encoded: o(6, "bool"),
    orderingKey: o(7, "bytes"),
    sequenceId: o(8, "uint64"),
    nullValue: o(9, "bool"),
    nullPartitionKey: o(10, "bool"),
  },
  BrokerEntryMetadata: { brokerTimestamp: o(1, "uint64n"), index: o(2, "uint64") },
  FeatureFlags: {
    supportsAuthRefresh: o(1, "bool"),
    supportsBrokerEntryMetadata: o(2, "bool"),
    supportsPartialProducer: o(3, "bool"),
    supportsTopicWatchers: o(4, "bool"),
  },
  AuthData: { authMethodName: o(1, "string"), authData: o(2, "bytes") },
  CommandConnect: {
    clientVersion: r(1, "string"),
    authData: o(3, "bytes"),
    protocolVersion: o(4, "int32"),
    authMethodName: o(5, "string"),
    proxyToBrokerUrl: o(6, "string"),
    featureFlags: o(10, "FeatureFlags"),
  },
  CommandConnected: {
    serverVersion: r(1, "string"),
    protocolVersion: o(2, "int32"),
    maxMessageSize: o(3, "int32"),
    featureFlags: o(4, "FeatureFlags"),
  },
  CommandAuthChallenge: {
    serverVersion: o(1, "string"),
    challenge: o(2, "AuthData"),
    protocolVersion: o(3, "int32"),
  },
  CommandAuthResponse: {
    clientVersion: o(1, "string"),
    response: o(2, "AuthData"),
    protocolVersion: o(3, "int32"),
  },
  KeySharedMeta: {
    keySharedMode: r(1, "KeySharedMode"),
    hashRanges: rep(3, "IntRange"),
    allowOutOfOrderDelivery: o(4, "bool"),
  },
  CommandSubscribe: {
    topic: r(1, "string"),
    subscription: r(2, "string"),
    subType: r(3, "SubType"),
    consumerId: r(4, "uint64n"),
    requestId: r(5, "uint64n"),
    consumerName: o(6, "string"),
    priorityLevel: o(7, "int32"),
    durable: o(8, "bool"),
    startMessageId: o(9, "MessageIdData"),
    metadata: rep(10, "KeyValue"),
    readCompacted: o(11, "bool"),
    initialPosition: o(13, "InitialPosition"),
    replicateSubscriptionState: o(14, "bool"),
    forceTopicCreation: o(15, "bool"),
    startMessageRollbackDurationSec: o(16, "uint64n"),
    keySharedMeta: o(17, "KeySharedMeta"),
    subscriptionProperties: rep(18, "KeyValue"),
    consumerEpoch: o(19, "uint64"),
  },
  CommandPartitionedTopicMetadata: { topic: r(1, "string"), requestId: r(2, "uint64n") },
  CommandPartitionedTopicMetadataResponse: {
    partitions: o(1, "uint32"),
    requestId: r(2, "uint64n"),
    response: o(3, "PartitionMetadataResult"),
    error: o(4, "ServerError"),
    message: o(5, "string"),
  },
  CommandLookupTopic: {
    topic: r(1, "string"),
    requestId: r(2, "uint64n"),
    authoritative: o(3, "bool"),
    advertisedListenerName: o(7, "string"),
  },
  CommandLookupTopicResponse: {
    brokerServiceUrl: o(1, "string"),
    brokerServiceUrlTls: o(2, "string"),
    response: o(3, "LookupType"),
    requestId: r(4, "uint64n"),
    authoritative: o(5, "bool"),
    error: o(6, "ServerError"),
    message: o(7, "string"),
    proxyThroughServiceUrl: o(8, "bool"),
  },
  CommandProducer: {
    topic: r(1, "string"),
    producerId: r(2, "uint64n"),
    requestId: r(3, "uint64n"),
    producerName: o(4, "string"),
    encrypted: o(5, "bool"),
    metadata: rep(6, "KeyValue"),
    epoch: o(8, "uint64"),
    userProvidedProducerName: o(9, "bool"),
    producerAccessMode: o(10, "ProducerAccessMode"),
    topicEpoch: o(11, "uint64"),
    txnEnabled: o(12, "bool"),
    initialSubscriptionName: o(13, "string"),
  },
  CommandProducerSuccess: {
    requestId: r(1, "uint64n"),
    producerName: r(2, "string"),
    lastSequenceId: o(3, "int64"),
    schemaVersion: o(4, "bytes"),
    topicEpoch: o(5, "uint64"),
    producerReady: o(6, "bool"),
  },
  CommandSend: {
    producerId: r(1, "uint64n"),
    sequenceId: r(2, "uint64"),
    numMessages: o(3, "int32"),
    highestSequenceId: o(6, "uint64"),
    isChunk: o(7, "bool"),
    marker: o(8, "bool"),
  },
  CommandSendReceipt: {
    producerId: r(1, "uint64n"),
    sequenceId: r(2, "uint64"),
    messageId: o(3, "MessageIdData"),
    highestSequenceId: o(4, "uint64"),
  },
  CommandSendError: {
    producerId: r(1, "uint64n"),
    sequenceId: r(2, "uint64"),
    error: r(3, "ServerError"),
    message: r(4, "string"),
  },
  CommandMessage: {
    consumerId: r(1, "uint64n"),
    messageId: r(2, "MessageIdData"),
    redeliveryCount: o(3, "uint32"),
    ackSet: rep(4, "int64"),
    consumerEpoch: o(5, "uint64"),
  },
  CommandAck: {
    consumerId: r(1, "uint64n"),
    ackType: r(2, "AckType"),
    messageId: rep(3, "MessageIdData"),
    validationError: o(4, "ValidationError"),
    properties: rep(5, "KeyLongValue"),
    requestId: o(8, "uint64n"),
  },
  CommandAckResponse: {
    consumerId: r(1, "uint64n"),
    error: o(4, "ServerError"),
    message: o(5, "string"),
    requestId: o(6, "uint64n"),
  },
  CommandActiveConsumerChange: { consumerId: r(1, "uint64n"), isActive: o(2, "bool") },
  CommandFlow: { consumerId: r(1, "uint64n"), messagePermits: r(2, "uint32") },
  CommandUnsubscribe: {
    consumerId: r(1, "uint64n"),
    requestId: r(2, "uint64n"),
    force: o(3, "bool"),
  },
  CommandSeek: {
    consumerId: r(1, "uint64n"),
    requestId: r(2, "uint64n"),
    messageId: o(3, "MessageIdData"),
    messagePublishTime: o(4, "uint64n"),
  },
  CommandReachedEndOfTopic: { consumerId: r(1, "uint64n") },
  CommandCloseProducer: {
    producerId: r(1, "uint64n"),
    requestId: r(2, "uint64n"),
    assignedBrokerServiceUrl: o(3, "string"),
    assignedBrokerServiceUrlTls: o(4, "string"),
  },
  CommandCloseConsumer: {
    consumerId: r(1, "uint64n"),
    requestId: r(2, "uint64n"),
    assignedBrokerServiceUrl: o(3, "string"),
    assignedBrokerServiceUrlTls: o(4, "string"),
  },
  CommandRedeliverUnacknowledgedMessages: {
    consumerId: r(1, "uint64n"),
    messageIds: rep(2, "MessageIdData"),
    consumerEpoch: o(3, "uint64"),
  },
  CommandSuccess: { requestId: r(1, "uint64n") },
  CommandError: { requestId: r(1, "uint64n"), error: r(2, "ServerError"), message: r(3, "string") },
  CommandPing: {},
  CommandPong: {},
  CommandGetLastMessageId: { consumerId: r(1, "uint64n"), requestId: r(2, "uint64n") },
  CommandGetLastMessageIdResponse: {
    lastMessageId: r(1, "MessageIdData"),
    requestId: r(2, "uint64n"),
    consumerMarkDeletePosition: o(3, "MessageIdData"),
  },
  CommandConsumerStats: { requestId: r(1, "uint64n"), consumerId: r(4, "uint64n") },
  // Only the counts are read; the rates (doubles) and strings after them are skipped.
  CommandConsumerStatsResponse: {
    requestId: r(1, "uint64n"),
    errorCode: o(2, "ServerError"),
    errorMessage: o(3, "string"),
    unackedMessages: o(9, "uint64n"),
    type: o(13, "string"),
    msgBacklog: o(15, "uint64n"),
  },
  CommandTopicMigrated: {
    resourceId: r(1, "uint64n"),
    resourceType: r(2, "ResourceType"),
    brokerServiceUrl: o(3, "string"),
    brokerServiceUrlTls: o(4, "string"),
  },
  BaseCommand: {
    type: r(1, "CommandType"),
    connect: o(2, "CommandConnect"),
    connected: o(3, "CommandConnected"),
    subscribe: o(4, "CommandSubscribe"),
    producer: o(5, "CommandProducer"),
    send: o(6, "CommandSend"),
    sendReceipt: o(7, "CommandSendReceipt"),
    sendError: o(8, "CommandSendError"),
    message: o(9, "CommandMessage"),
    ack: o(10, "CommandAck"),
    flow: o(11, "CommandFlow"),
    unsubscribe: o(12, "CommandUnsubscribe"),
    success: o(13, "CommandSuccess"),
    error: o(14, "CommandError"),
    closeProducer: o(15, "CommandCloseProducer"),
    closeConsumer: o(16, "CommandCloseConsumer"),
    producerSuccess: o(17, "CommandProducerSuccess"),
    ping: o(18, "CommandPing"),
    pong: o(19, "CommandPong"),
    redeliverUnacknowledgedMessages: o(20, "CommandRedeliverUnacknowledgedMessages"),
    partitionMetadata: o(21, "CommandPartitionedTopicMetadata"),
    partitionMetadataResponse: o(22, "CommandPartitionedTopicMetadataResponse"),
    lookupTopic: o(23, "CommandLookupTopic"),
    lookupTopicResponse: o(24, "CommandLookupTopicResponse"),
    consumerStats: o(25, "CommandConsumerStats"),
    consumerStatsResponse: o(26, "CommandConsumerStatsResponse"),
    reachedEndOfTopic: o(27, "CommandReachedEndOfTopic"),
    seek: o(28, "CommandSeek"),
    getLastMessageId: o(29, "CommandGetLastMessageId"),
    getLastMessageIdResponse: o(30, "CommandGetLastMessageIdResponse"),
    activeConsumerChange: o(31, "CommandActiveConsumerChange"),
    authChallenge: o(36, "CommandAuthChallenge"),
    authResponse: o(37, "CommandAuthResponse"),
    ackResponse: o(38, "CommandAckResponse"),
    topicMigrated: o(68, "CommandTopicMigrated"),
  },
} as const satisfies Record<string, Record<string, FieldSpec>>;

/** The name of a message in the table. */
export type MessageName = keyof typeof MESSAGES;

// The Pulsar binary protocol's protobuf messages, written for this project from the protocol's
// facts (command names, field numbers, types); only what the client sends or reads is declared, and
// protobuf skips the rest. proto2 rules hold: a required field is always encoded, even when 0, and
// an absent optional field decodes as absent (the code reading it applies the protocol's default).
//
// 64-bit integers: the ids this client allocates and millisecond times stay JavaScript numbers;
// what the broker allocates (ledger and entry ids, sequence ids, epochs) is a bigint, so no id is
// ever rounded through a double.
import protobuf from "protobufjs";

type Scalar =
  | "string"
  | "bytes"
  | "bool"
  | "int32"
  | "uint32"
  | "int64"
  | "uint64"
  | "int64n"
  | "uint64n";

interface FieldSpec {
  readonly id: number;
  readonly type: Scalar | string;
  readonly rule?: "required" | "repeated";
}

// "uint64n"/"int64n" are 64-bit on the wire and numbers in JavaScript.
const WIRE_TYPE: Record<string, string> = { uint64n: "uint64", int64n: "int64" };

const r = (id: number, type: Scalar | string): FieldSpec => ({ id, type, rule: "required" });
const o = (id: number, type: Scalar | string): FieldSpec => ({ id, type });
const rep = (id: number, type: Scalar | string): FieldSpec => ({ id, type, rule: "repeated" });

const ENUMS = {
  CompressionType: { NONE: 0, LZ4: 1, ZLIB: 2, ZSTD: 3, SNAPPY: 4 },
  ServerError: {
    UnknownError: 0,
    MetadataError: 1,
    PersistenceError: 2,
    AuthenticationError: 3,
    AuthorizationError: 4,
    ConsumerBusy: 5,
    ServiceNotReady: 6,
    ProducerBlockedQuotaExceededError: 7,
    ProducerBlockedQuotaExceededException: 8,
    ChecksumError: 9,
    UnsupportedVersionError: 10,
    TopicNotFound: 11,
    SubscriptionNotFound: 12,
    ConsumerNotFound: 13,
    TooManyRequests: 14,
    TopicTerminatedError: 15,
    ProducerBusy: 16,
    InvalidTopicName: 17,
    IncompatibleSchema: 18,
    ConsumerAssignError: 19,
    TransactionCoordinatorNotFound: 20,
    InvalidTxnStatus: 21,
    NotAllowedError: 22,
    TransactionConflict: 23,
    TransactionNotFound: 24,
    ProducerFenced: 25,
  },
  SubType: { Exclusive: 0, Shared: 1, Failover: 2, Key_Shared: 3 },
  InitialPosition: { Latest: 0, Earliest: 1 },
  KeySharedMode: { AUTO_SPLIT: 0, STICKY: 1 },
  AckType: { Individual: 0, Cumulative: 1 },
  ProducerAccessMode: { Shared: 0, Exclusive: 1, WaitForExclusive: 2, ExclusiveWithFencing: 3 },
  PartitionMetadataResult: { Success: 0, Failed: 1 },
  LookupType: { Redirect: 0, Connect: 1, Failed: 2 },
  ResourceType: { Producer: 0, Consumer: 1 },
  ValidationError: {
    UncompressedSizeCorruption: 0,
    DecompressionError: 1,
    ChecksumMismatch: 2,
    BatchDeSerializeError: 3,
    DecryptionError: 4,
  },
  CommandType: {
    CONNECT: 2,
    CONNECTED: 3,
    SUBSCRIBE: 4,
    PRODUCER: 5,
    SEND: 6,
    SEND_RECEIPT: 7,
    SEND_ERROR: 8,
    MESSAGE: 9,
    ACK: 10,
    FLOW: 11,
    UNSUBSCRIBE: 12,
    SUCCESS: 13,
    ERROR: 14,
    CLOSE_PRODUCER: 15,
    CLOSE_CONSUMER: 16,
    PRODUCER_SUCCESS: 17,
    PING: 18,
    PONG: 19,
    REDELIVER_UNACKNOWLEDGED_MESSAGES: 20,
    PARTITIONED_METADATA: 21,
    PARTITIONED_METADATA_RESPONSE: 22,
    LOOKUP: 23,
    LOOKUP_RESPONSE: 24,
    REACHED_END_OF_TOPIC: 27,
    SEEK: 28,
    GET_LAST_MESSAGE_ID: 29,
    GET_LAST_MESSAGE_ID_RESPONSE: 30,
    ACTIVE_CONSUMER_CHANGE: 31,
    AUTH_CHALLENGE: 36,
    AUTH_RESPONSE: 37,
    ACK_RESPONSE: 38,
    TOPIC_MIGRATED: 68,
  },
} as const;

/** Which kind of command a frame holds (`BaseCommand.type`); the sub-command's field has the same number. */
export const CommandType = ENUMS.CommandType;
export type CommandTypeValue = (typeof CommandType)[keyof typeof CommandType];
export const CompressionType = ENUMS.CompressionType;
export type CompressionTypeValue = (typeof CompressionType)[keyof typeof CompressionType];
export const ServerError = ENUMS.ServerError;
export const SubType = ENUMS.SubType;
export type SubTypeValue = (typeof SubType)[keyof typeof SubType];
export const InitialPosition = ENUMS.InitialPosition;
export const KeySharedMode = ENUMS.KeySharedMode;
export const AckType = ENUMS.AckType;
export const ProducerAccessMode = ENUMS.ProducerAccessMode;
export const LookupType = ENUMS.LookupType;
export const PartitionMetadataResult = ENUMS.PartitionMetadataResult;
export const ValidationError = ENUMS.ValidationError;
export const ResourceTypeValue = ENUMS.ResourceType;

/** The name of a `ServerError` code, or `ServerError(<n>)` for a code newer than this client. */
export function serverErrorName(code: number): string {
  for (const [name, value] of Object.entries(ServerError)) if (value === code) return name;
  return `ServerError(${code})`;
}

const MESSAGES: Record<string, Record<string, FieldSpec>> = {
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
};

// protobufjs reads a JSON descriptor without an edition as proto3, where an optional field holding
// zero or false is not written at all: partition 0, batch index 0 and durable=false would vanish.
// Every type, enum and field here is marked proto2, so explicit presence holds.
const EDITION = { edition: "proto2" } as const;

function buildRoot(): protobuf.Root {
  const nested: Record<string, object> = {};
  for (const [name, values] of Object.entries(ENUMS))
    nested[name] = { ...EDITION, values: { ...values } };
  for (const [name, fields] of Object.entries(MESSAGES)) {
    const out: Record<string, object> = {};
    for (const [fieldName, spec] of Object.entries(fields)) {
      const field: Record<string, unknown> = {
        ...EDITION,
        id: spec.id,
        type: WIRE_TYPE[spec.type] ?? spec.type,
      };
      if (spec.rule !== undefined) field.rule = spec.rule;
      // proto2 leaves repeated scalars unpacked; say so, rather than rely on the library's default.
      if (spec.rule === "repeated" && !(spec.type in MESSAGES)) field.options = { packed: false };
      out[fieldName] = field;
    }
    nested[name] = { ...EDITION, fields: out };
  }
  return protobuf.Root.fromJSON({ nested } as protobuf.INamespace);
}

const root = buildRoot();

// Conversion between protobufjs's decoded objects (64-bit values as Long) and this module's plain
// objects (bigint or number), planned once per message type.
type FieldPlan =
  | { name: string; kind: "big"; repeated: boolean; signed: boolean }
  | { name: string; kind: "num"; repeated: boolean; signed: boolean }
  | { name: string; kind: "message"; repeated: boolean; type: string }
  | { name: string; kind: "plain"; repeated: boolean };

const plans = new Map<string, FieldPlan[]>();
for (const [typeName, fields] of Object.entries(MESSAGES)) {
  plans.set(
    typeName,
    Object.entries(fields).map(([name, spec]): FieldPlan => {
      const repeated = spec.rule === "repeated";
      if (spec.type === "uint64" || spec.type === "int64")
        return { name, kind: "big", repeated, signed: spec.type === "int64" };
      if (spec.type === "uint64n" || spec.type === "int64n")
        return { name, kind: "num", repeated, signed: spec.type === "int64n" };
      if (spec.type in MESSAGES) return { name, kind: "message", repeated, type: spec.type };
      return { name, kind: "plain", repeated };
    }),
  );
}

interface LongLike {
  low: number;
  high: number;
}

function longToBig(value: LongLike | number, signed: boolean): bigint {
  if (typeof value === "number") return BigInt(value);
  const big = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  return signed ? BigInt.asIntN(64, big) : big;
}

function longToNumber(value: LongLike | number, signed: boolean): number {
  if (typeof value === "number") return value;
  const high = signed ? value.high | 0 : value.high >>> 0;
  return high * 0x1_0000_0000 + (value.low >>> 0);
}

function bigToLong(value: bigint | number): LongLike | number {
  if (typeof value === "number") return value;
  const bits = BigInt.asUintN(64, value);
  return { low: Number(bits & 0xffffffffn) | 0, high: Number(bits >> 32n) | 0 };
}

function numberToLong(value: number): LongLike | number {
  // protobufjs writes a negative number through its own two's complement split; keep it a number.
  return value;
}

type Loose = Record<string, unknown>;

function toPlain(typeName: string, wire: Loose): Loose {
  const out: Loose = {};
  for (const plan of plans.get(typeName)!) {
    if (!Object.hasOwn(wire, plan.name)) continue;
    const value = wire[plan.name];
    if (value === undefined || value === null) continue;
    if (plan.repeated) {
      const list = value as unknown[];
      if (list.length === 0) continue;
      out[plan.name] = list.map((item) => convertIn(plan, item));
    } else {
      out[plan.name] = convertIn(plan, value);
    }
  }
  return out;
}

function convertIn(plan: FieldPlan, value: unknown): unknown {
  switch (plan.kind) {
    case "big":
      return longToBig(value as LongLike, plan.signed);
    case "num":
      return longToNumber(value as LongLike, plan.signed);
    case "message":
      return toPlain(plan.type, value as Loose);
    default:
      return value;
  }
}

function toWire(typeName: string, plain: Loose): Loose {
  const out: Loose = {};
  for (const plan of plans.get(typeName)!) {
    const value = plain[plan.name];
    if (value === undefined) continue;
    out[plan.name] = plan.repeated
      ? (value as unknown[]).map((item) => convertOut(plan, item))
      : convertOut(plan, value);
  }
  return out;
}

function convertOut(plan: FieldPlan, value: unknown): unknown {
  switch (plan.kind) {
    case "big":
      return bigToLong(value as bigint);
    case "num":
      return numberToLong(value as number);
    case "message":
      return toWire(plan.type, value as Loose);
    default:
      return value;
  }
}

function codec<T>(typeName: string): {
  encode(value: T): Uint8Array;
  decode(bytes: Uint8Array): T;
} {
  const type = root.lookupType(typeName);
  return {
    encode: (value) => type.encode(toWire(typeName, value as Loose)).finish(),
    decode: (bytes) => toPlain(typeName, type.decode(bytes) as unknown as Loose) as T,
  };
}

// ---- The plain shapes. Optional fields are absent when the peer did not send them. ----

export interface MessageIdData {
  ledgerId: bigint;
  entryId: bigint;
  partition?: number;
  batchIndex?: number;
  ackSet?: bigint[];
  batchSize?: number;
  firstChunkMessageId?: MessageIdData;
}

export interface KeyValue {
  key: string;
  value: string;
}

export interface MessageMetadata {
  producerName: string;
  sequenceId: bigint;
  publishTime: number;
  properties?: KeyValue[];
  replicatedFrom?: string;
  partitionKey?: string;
  replicateTo?: string[];
  compression?: number;
  uncompressedSize?: number;
  numMessagesInBatch?: number;
  eventTime?: number;
  encryptionAlgo?: string;
  encryptionParam?: Uint8Array;
  schemaVersion?: Uint8Array;
  partitionKeyB64Encoded?: boolean;
  orderingKey?: Uint8Array;
  deliverAtTime?: number;
  markerType?: number;
  txnidLeastBits?: bigint;
  txnidMostBits?: bigint;
  highestSequenceId?: bigint;
  nullValue?: boolean;
  uuid?: string;
  numChunksFromMsg?: number;
  totalChunkMsgSize?: number;
  chunkId?: number;
  nullPartitionKey?: boolean;
}

export interface SingleMessageMetadata {
  properties?: KeyValue[];
  partitionKey?: string;
  payloadSize: number;
  compactedOut?: boolean;
  eventTime?: number;
  partitionKeyB64Encoded?: boolean;
  orderingKey?: Uint8Array;
  sequenceId?: bigint;
  nullValue?: boolean;
  nullPartitionKey?: boolean;
}

export interface BrokerEntryMetadata {
  brokerTimestamp?: number;
  index?: bigint;
}

export interface FeatureFlags {
  supportsAuthRefresh?: boolean;
  supportsBrokerEntryMetadata?: boolean;
  supportsPartialProducer?: boolean;
  supportsTopicWatchers?: boolean;
}

export interface AuthData {
  authMethodName?: string;
  authData?: Uint8Array;
}

export interface CommandConnect {
  clientVersion: string;
  authData?: Uint8Array;
  protocolVersion?: number;
  authMethodName?: string;
  proxyToBrokerUrl?: string;
  featureFlags?: FeatureFlags;
}

export interface CommandConnected {
  serverVersion: string;
  protocolVersion?: number;
  maxMessageSize?: number;
  featureFlags?: FeatureFlags;
}

export interface CommandAuthChallenge {
  serverVersion?: string;
  challenge?: AuthData;
  protocolVersion?: number;
}

export interface CommandAuthResponse {
  clientVersion?: string;
  response?: AuthData;
  protocolVersion?: number;
}

export interface KeySharedMeta {
  keySharedMode: number;
  hashRanges?: { start: number; end: number }[];
  allowOutOfOrderDelivery?: boolean;
}

export interface CommandSubscribe {
  topic: string;
  subscription: string;
  subType: number;
  consumerId: number;
  requestId: number;
  consumerName?: string;
  priorityLevel?: number;
  durable?: boolean;
  startMessageId?: MessageIdData;
  metadata?: KeyValue[];
  readCompacted?: boolean;
  initialPosition?: number;
  replicateSubscriptionState?: boolean;
  forceTopicCreation?: boolean;
  startMessageRollbackDurationSec?: number;
  keySharedMeta?: KeySharedMeta;
  subscriptionProperties?: KeyValue[];
  consumerEpoch?: bigint;
}

export interface CommandPartitionedTopicMetadata {
  topic: string;
  requestId: number;
}

export interface CommandPartitionedTopicMetadataResponse {
  partitions?: number;
  requestId: number;
  response?: number;
  error?: number;
  message?: string;
}

export interface CommandLookupTopic {
  topic: string;
  requestId: number;
  authoritative?: boolean;
  advertisedListenerName?: string;
}

export interface CommandLookupTopicResponse {
  brokerServiceUrl?: string;
  brokerServiceUrlTls?: string;
  response?: number;
  requestId: number;
  authoritative?: boolean;
  error?: number;
  message?: string;
  proxyThroughServiceUrl?: boolean;
}

export interface CommandProducer {
  topic: string;
  producerId: number;
  requestId: number;
  producerName?: string;
  encrypted?: boolean;
  metadata?: KeyValue[];
  epoch?: bigint;
  userProvidedProducerName?: boolean;
  producerAccessMode?: number;
  topicEpoch?: bigint;
  txnEnabled?: boolean;
  initialSubscriptionName?: string;
}

export interface CommandProducerSuccess {
  requestId: number;
  producerName: string;
  lastSequenceId?: bigint;
  schemaVersion?: Uint8Array;
  topicEpoch?: bigint;
  producerReady?: boolean;
}

export interface CommandSend {
  producerId: number;
  sequenceId: bigint;
  numMessages?: number;
  highestSequenceId?: bigint;
  isChunk?: boolean;
  marker?: boolean;
}

export interface CommandSendReceipt {
  producerId: number;
  sequenceId: bigint;
  messageId?: MessageIdData;
  highestSequenceId?: bigint;
}

export interface CommandSendError {
  producerId: number;
  sequenceId: bigint;
  error: number;
  message: string;
}

export interface CommandMessage {
  consumerId: number;
  messageId: MessageIdData;
  redeliveryCount?: number;
  ackSet?: bigint[];
  consumerEpoch?: bigint;
}

export interface CommandAck {
  consumerId: number;
  ackType: number;
  messageId?: MessageIdData[];
  validationError?: number;
  properties?: { key: string; value: bigint }[];
  requestId?: number;
}

export interface CommandAckResponse {
  consumerId: number;
  error?: number;
  message?: string;
  requestId?: number;
}

export interface CommandActiveConsumerChange {
  consumerId: number;
  isActive?: boolean;
}

export interface CommandFlow {
  consumerId: number;
  messagePermits: number;
}

export interface CommandUnsubscribe {
  consumerId: number;
  requestId: number;
  force?: boolean;
}

export interface CommandSeek {
  consumerId: number;
  requestId: number;
  messageId?: MessageIdData;
  messagePublishTime?: number;
}

export interface CommandReachedEndOfTopic {
  consumerId: number;
}

export interface CommandCloseProducer {
  producerId: number;
  requestId: number;
  assignedBrokerServiceUrl?: string;
  assignedBrokerServiceUrlTls?: string;
}

export interface CommandCloseConsumer {
  consumerId: number;
  requestId: number;
  assignedBrokerServiceUrl?: string;
  assignedBrokerServiceUrlTls?: string;
}

export interface CommandRedeliverUnacknowledgedMessages {
  consumerId: number;
  messageIds?: MessageIdData[];
  consumerEpoch?: bigint;
}

export interface CommandSuccess {
  requestId: number;
}

export interface CommandError {
  requestId: number;
  error: number;
  message: string;
}

export interface CommandGetLastMessageId {
  consumerId: number;
  requestId: number;
}

export interface CommandGetLastMessageIdResponse {
  lastMessageId: MessageIdData;
  requestId: number;
  consumerMarkDeletePosition?: MessageIdData;
}

export interface CommandTopicMigrated {
  resourceId: number;
  resourceType: number;
  brokerServiceUrl?: string;
  brokerServiceUrlTls?: string;
}

/** One command frame's protobuf: `type` says which one sub-command field is set. */
export interface BaseCommand {
  type: number;
  connect?: CommandConnect;
  connected?: CommandConnected;
  subscribe?: CommandSubscribe;
  producer?: CommandProducer;
  send?: CommandSend;
  sendReceipt?: CommandSendReceipt;
  sendError?: CommandSendError;
  message?: CommandMessage;
  ack?: CommandAck;
  flow?: CommandFlow;
  unsubscribe?: CommandUnsubscribe;
  success?: CommandSuccess;
  error?: CommandError;
  closeProducer?: CommandCloseProducer;
  closeConsumer?: CommandCloseConsumer;
  producerSuccess?: CommandProducerSuccess;
  ping?: Record<string, never>;
  pong?: Record<string, never>;
  redeliverUnacknowledgedMessages?: CommandRedeliverUnacknowledgedMessages;
  partitionMetadata?: CommandPartitionedTopicMetadata;
  partitionMetadataResponse?: CommandPartitionedTopicMetadataResponse;
  lookupTopic?: CommandLookupTopic;
  lookupTopicResponse?: CommandLookupTopicResponse;
  reachedEndOfTopic?: CommandReachedEndOfTopic;
  seek?: CommandSeek;
  getLastMessageId?: CommandGetLastMessageId;
  getLastMessageIdResponse?: CommandGetLastMessageIdResponse;
  activeConsumerChange?: CommandActiveConsumerChange;
  authChallenge?: CommandAuthChallenge;
  authResponse?: CommandAuthResponse;
  ackResponse?: CommandAckResponse;
  topicMigrated?: CommandTopicMigrated;
}

/** Encodes and decodes `BaseCommand`, the protobuf inside every frame. */
export const baseCommand = codec<BaseCommand>("BaseCommand");
/** Encodes and decodes the metadata a payload frame carries before the payload. */
export const messageMetadata = codec<MessageMetadata>("MessageMetadata");
/** Encodes and decodes the metadata before each message of a batch. */
export const singleMessageMetadata = codec<SingleMessageMetadata>("SingleMessageMetadata");
/** Decodes the broker's own metadata, present only when the broker adds it (0x0e02). */
export const brokerEntryMetadata = codec<BrokerEntryMetadata>("BrokerEntryMetadata");
/** Encodes and decodes a message id: the bytes `MessageId.toBytes` gives, as the Java client's. */
export const messageIdData = codec<MessageIdData>("MessageIdData");

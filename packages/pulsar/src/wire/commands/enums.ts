// The Pulsar protocol's enums (PulsarApi.proto), by name and number: the numbers are the protocol's
// facts. The field table (fieldTable.ts) names these as field types; the codec (codec.ts) declares
// them to protobufjs.
export const ENUMS = {
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
    CONSUMER_STATS: 25,
    CONSUMER_STATS_RESPONSE: 26,
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

/** The name of an enum, as a field's type in the field table. */
export type EnumName = keyof typeof ENUMS;

/** Which kind of command a frame holds (`BaseCommand.type`); the sub-command's field has the same number. */
export const CommandType = ENUMS.CommandType;
export const CompressionType = ENUMS.CompressionType;
export type CompressionTypeValue = (typeof CompressionType)[keyof typeof CompressionType];
export const ServerError = ENUMS.ServerError;
export const SubType = ENUMS.SubType;
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

const compressionNames = new Map<number, string>(
  Object.entries(CompressionType).map(([name, value]) => [value, name]),
);

/** The name of a `CompressionType` value; undefined for one this client does not know. */
export function compressionName(type: number): string | undefined {
  return compressionNames.get(type);
}

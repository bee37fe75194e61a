import type { KjsCodec } from "./boundedGzip.js";
// The part of kafkajs this engine uses, typed narrowly here so kafkajs's own declarations stay out
// of everything above src/client/. The module is loaded when a broker connects (load.ts).

export type KjsConfig = Record<string, unknown>;

export interface KjsMessage {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: string;
  readonly headers?: Record<string, Buffer | string | Array<Buffer | string> | undefined>;
}

export interface KjsBatch {
  readonly topic: string;
  readonly partition: number;
  readonly messages: KjsMessage[];
  lastOffset(): string;
}

export interface KjsEachBatchPayload {
  readonly batch: KjsBatch;
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  isRunning(): boolean;
  isStale(): boolean;
}

export interface KjsTopicPartitionOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

export interface KjsConsumer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  subscribe(options: { topics: string[]; fromBeginning: boolean }): Promise<void>;
  run(options: {
    autoCommit: boolean;
    eachBatchAutoResolve: boolean;
    partitionsConsumedConcurrently?: number;
    eachBatch(payload: KjsEachBatchPayload): Promise<void>;
  }): Promise<void>;
  seek(target: KjsTopicPartitionOffset): void;
  commitOffsets(offsets: KjsTopicPartitionOffset[]): Promise<void>;
  readonly events: Readonly<Record<string, string>>;
  on(event: string, listener: (event: { payload: KjsEventPayload }) => void): () => void;
}

export interface KjsEventPayload {
  readonly memberAssignment?: Record<string, number[]>;
  readonly error?: unknown;
  readonly restart?: boolean;
}

export interface KjsRecordMetadata {
  readonly partition: number;
  readonly baseOffset?: string;
  readonly offset?: string;
}

/** A record to produce. kafkajs hands this very object to the partitioner. */
export interface KjsOutgoingMessage {
  key: Buffer | null;
  value: Buffer;
  partition?: number;
  headers: Record<string, Buffer | Buffer[]>;
}

export interface KjsProduceRequest {
  topic: string;
  acks?: number;
  compression?: number;
  messages: KjsOutgoingMessage[];
}

export interface KjsProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  send(request: KjsProduceRequest): Promise<KjsRecordMetadata[]>;
  /** On a producer with a transactionalId: begins one (initialising transactions the first time). */
  transaction(): Promise<KjsTransaction>;
}

export interface KjsTransaction {
  send(request: KjsProduceRequest): Promise<KjsRecordMetadata[]>;
  commit(): Promise<void>;
  abort(): Promise<void>;
  isActive(): boolean;
}

export interface KjsAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  fetchTopicMetadata(options: { topics: string[] }): Promise<{
    topics: Array<{ name: string; partitions: Array<{ partitionId: number }> }>;
  }>;
  createTopics(options: {
    waitForLeaders: boolean;
    topics: Array<{ topic: string; numPartitions?: number; replicationFactor?: number }>;
  }): Promise<boolean>;
  deleteTopics(options: { topics: string[]; timeout?: number }): Promise<void>;
  deleteGroups(groupIds: string[]): Promise<unknown>;
  fetchTopicOffsets(
    topic: string,
  ): Promise<Array<{ partition: number; offset: string; high: string; low: string }>>;
  fetchTopicOffsetsByTimestamp(
    topic: string,
    timestamp: number,
  ): Promise<Array<{ partition: number; offset: string }>>;
  fetchOffsets(options: {
    groupId: string;
    topics: string[];
  }): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
  describeCluster(): Promise<{ brokers: Array<{ nodeId: number }> }>;
  describeConfigs(options: {
    includeSynonyms: boolean;
    resources: Array<{ type: number; name: string; configNames: string[] }>;
  }): Promise<{
    resources: Array<{ configEntries: Array<{ configName: string; configValue: string }> }>;
  }>;
}

export type KjsPartitioner = () => (args: {
  topic: string;
  partitionMetadata: Array<{ partitionId: number }>;
  message: KjsOutgoingMessage;
}) => number;

/** kafkajs's encoding of a group member's subscription and of its assignment. */
export interface KjsAssignerProtocol {
  readonly MemberMetadata: {
    encode(value: { version: number; topics: string[]; userData: Buffer }): Buffer;
    decode(buffer: Buffer): { readonly topics: readonly string[] } | null;
  };
  readonly MemberAssignment: {
    encode(value: {
      version: number;
      assignment: Record<string, number[]>;
      userData: Buffer;
    }): Buffer;
  };
}

/** A partition assignor as kafkajs's `partitionAssigners` takes one. */
export type KjsPartitionAssigner = (config: {
  cluster: {
    /** Adds topics to those whose metadata the client keeps, and loads it. */
    addMultipleTargetTopics(topics: readonly string[]): Promise<void>;
    findTopicPartitionMetadata(topic: string): readonly { partitionId: number }[];
  };
}) => {
  readonly name: string;
  readonly version: number;
  assign(group: {
    members: readonly { memberId: string; memberMetadata: Buffer }[];
    topics: readonly string[];
  }): Promise<{ memberId: string; memberAssignment: Buffer }[]>;
  protocol(subscription: { topics: string[] }): { name: string; metadata: Buffer };
};

export interface KjsKafka {
  producer(options: KjsConfig): KjsProducer;
  consumer(options: KjsConfig): KjsConsumer;
  admin(options?: KjsConfig): KjsAdmin;
}

export interface KjsModule {
  readonly Kafka: new (config: KjsConfig) => KjsKafka;
  readonly logLevel: Readonly<Record<"NOTHING" | "ERROR" | "WARN" | "INFO" | "DEBUG", number>>;
  readonly AssignerProtocol: KjsAssignerProtocol;
  readonly ConfigResourceTypes: Readonly<Record<string, number>>;
  readonly CompressionTypes: Readonly<Record<"None" | "GZIP", number>>;
  /** The codecs kafkajs compresses and decompresses batches with, by type: one registry a process. */
  readonly CompressionCodecs: Record<number, () => KjsCodec>;
}

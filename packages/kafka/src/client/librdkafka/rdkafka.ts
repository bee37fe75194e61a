// The part of @confluentinc/kafka-javascript's node-rdkafka style API this engine uses, typed
// narrowly here: the package's own declarations are loose (`any` in places), and the engine is
// written against exactly these calls. The module is loaded when a broker connects (load.ts).

export type RdConfig = Record<string, unknown>;

export interface RdError extends Error {
  readonly code: number;
  readonly isFatal?: boolean;
  readonly isRetriable?: boolean;
  /** A transaction call failed in a way only an abort recovers from. */
  readonly isTxnRequiresAbort?: boolean;
}

export type RdCallback<T> = (error: RdError | null | undefined, value: T) => void;

/** A header as the binding carries it: one `{ name: value }` object per header. */
export type RdHeader = Record<string, Buffer | string | null | undefined>;

export interface RdMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | string | null | undefined;
  readonly value: Buffer | null | undefined;
  readonly headers?: RdHeader[];
  readonly timestamp?: number;
}

export interface RdTopicPartition {
  readonly topic: string;
  readonly partition: number;
  readonly offset?: number;
}

export interface RdMetadata {
  readonly topics: ReadonlyArray<{
    readonly name: string;
    readonly partitions: ReadonlyArray<{ readonly id: number }>;
  }>;
}

export interface RdClient {
  connect(options: { timeout?: number }, cb: RdCallback<unknown>): unknown;
  disconnect(cb: RdCallback<unknown>): unknown;
  isConnected(): boolean;
  getMetadata(
    options: { topic?: string; allTopics?: boolean; timeout?: number },
    cb: RdCallback<RdMetadata>,
  ): unknown;
  queryWatermarkOffsets(
    topic: string,
    partition: number,
    timeout: number,
    cb: RdCallback<{ lowOffset: number; highOffset: number }>,
  ): unknown;
  on(event: "event.error", listener: (error: RdError) => void): unknown;
}

export interface RdProducer extends RdClient {
  produce(
    topic: string,
    partition: number | null,
    value: Buffer,
    key: Buffer | null,
    timestamp: number | null,
    opaque: number,
    headers: RdHeader[],
  ): unknown;
  setPollInBackground(set: boolean): unknown;
  initTransactions(timeout: number, cb: (error: RdError | null | undefined) => void): unknown;
  beginTransaction(cb: (error: RdError | null | undefined) => void): unknown;
  commitTransaction(timeout: number, cb: (error: RdError | null | undefined) => void): unknown;
  abortTransaction(timeout: number, cb: (error: RdError | null | undefined) => void): unknown;
  sendOffsetsToTransaction(
    offsets: RdTopicPartition[],
    consumer: RdConsumer,
    timeout: number,
    cb: (error: RdError | null | undefined) => void,
  ): unknown;
  poll(): unknown;
  flush(timeout: number, cb: (error: RdError | null | undefined) => void): unknown;
  on(event: "event.error", listener: (error: RdError) => void): unknown;
  on(
    event: "delivery-report",
    listener: (error: RdError | null | undefined, report: RdDeliveryReport) => void,
  ): unknown;
}

export interface RdDeliveryReport {
  readonly partition: number;
  readonly offset: number;
  readonly opaque: number;
}

export interface RdConsumer extends RdClient {
  subscribe(topics: string[]): unknown;
  assign(partitions: RdTopicPartition[]): unknown;
  unassign(): unknown;
  incrementalAssign(partitions: RdTopicPartition[]): unknown;
  incrementalUnassign(partitions: RdTopicPartition[]): unknown;
  rebalanceProtocol(): string;
  assignments(): RdTopicPartition[];
  consume(count: number, cb: RdCallback<RdMessage[]>): unknown;
  setDefaultConsumeTimeout(ms: number): unknown;
  setDefaultIsTimeoutOnlyForFirstMessage(set: boolean): unknown;
  committed(
    partitions: RdTopicPartition[],
    timeout: number,
    cb: RdCallback<RdTopicPartition[]>,
  ): unknown;
  commitCb(
    partitions: RdTopicPartition[],
    cb: (error: RdError | null | undefined) => void,
  ): unknown;
  offsetsStore(partitions: RdTopicPartition[]): unknown;
  seek(
    partition: RdTopicPartition,
    timeout: number,
    cb: (error: RdError | null | undefined) => void,
  ): unknown;
  pause(partitions: RdTopicPartition[]): unknown;
  resume(partitions: RdTopicPartition[]): unknown;
}

export interface RdAdmin {
  listOffsets(
    partitions: Array<{ topic: string; partition: number; offset: unknown }>,
    /** `isolationLevel` 1: read_committed (the end is the last stable offset). */
    options: { timeout: number; isolationLevel?: 0 | 1 },
    cb: RdCallback<Array<{ partition: number; offset: number; error?: RdError }>>,
  ): unknown;
  createTopic(
    topic: { topic: string; num_partitions: number; replication_factor: number },
    timeout: number,
    cb: (error: RdError | null | undefined) => void,
  ): unknown;
  deleteTopic(
    topic: string,
    timeout: number,
    cb: (error: RdError | null | undefined) => void,
  ): unknown;
  /** The topics' descriptions from the cluster (an admin request: it never creates a topic). */
  describeTopics(
    topics: string[],
    options: { timeout: number },
    cb: RdCallback<
      Array<{ name: string; error?: RdError; partitions: Array<{ partition: number }> }>
    >,
  ): unknown;
  /** The group's committed offsets: with no `partitions`, every partition it has one for. */
  listConsumerGroupOffsets(
    groups: Array<{ groupId: string }>,
    options: { timeout: number },
    cb: RdCallback<
      Array<{
        groupId: string;
        error?: RdError;
        partitions: Array<{ topic: string; partition: number; offset: number; error?: RdError }>;
      }>
    >,
  ): unknown;
  disconnect(): unknown;
}

/** What `listOffsets` asks of a partition: the first record at or after a time, or either end. */
export interface RdOffsetSpec {
  new (timestamp: number): unknown;
  readonly EARLIEST: unknown;
  readonly LATEST: unknown;
}

export interface RdModule {
  readonly Producer: new (config: RdConfig) => RdProducer;
  readonly KafkaConsumer: new (config: RdConfig, topicConfig: RdConfig) => RdConsumer;
  readonly AdminClient: {
    createFrom(client: RdProducer): RdAdmin;
  };
  readonly OffsetSpec: RdOffsetSpec;
  readonly CODES: { readonly ERRORS: Readonly<Record<string, number>> };
}

/** Calls a callback-style binding method as a promise. */
export function call<T>(start: (cb: RdCallback<T>) => unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    start((error, value) => {
      if (error) reject(error);
      else resolve(value);
    });
  });
}

/** Same, for methods whose callback carries only an error. */
export function callVoid(
  start: (cb: (error: RdError | null | undefined) => void) => unknown,
): Promise<void> {
  return new Promise((resolve, reject) => {
    start((error) => {
      if (error) reject(error);
      else resolve();
    });
  });
}

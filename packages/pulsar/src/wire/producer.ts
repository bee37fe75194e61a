// Producers. A PartitionProducer owns one topic (or one partition of a partitioned topic): it gives
// each entry the next sequence id, keeps sent entries in order until their receipts come back (which
// the broker sends in order), batches messages into entries, and after a reconnect resends every
// entry still waiting, in order. A Producer routes messages over a topic's partitions.
import { RustStreamError } from "@ruststream/core";
import { Attacher, type Attachment, type AttachTarget } from "./attacher.js";
import {
  encodeBatchEntry,
  sizeAndSequenceEntryLength,
  writeSizeAndSequenceEntry,
} from "./batch.js";
import { CommandType, CompressionType, ProducerAccessMode, ServerError } from "./commands/enums.js";
import type {
  CommandSendError,
  CommandSendReceipt,
  KeyValue,
  MessageMetadata,
  SingleMessageMetadata,
} from "./commands/shapes.js";
import { type Compression, compress, compressionType, loadCodecs } from "./compression.js";
import type { Connection, ProducerHandler } from "./connection.js";
import { closedError, serverFailure } from "./errors.js";
import { buildPayloadFrame, DEFAULT_MAX_MESSAGE_SIZE, FRAME_PADDING } from "./frame.js";
import type { ClientHost } from "./host.js";
import { MessageId } from "./messageId.js";
import { type HashingScheme, partitionForKey } from "./murmur3.js";
import { Queue } from "./queue.js";
import { parseTopicName, partitionTopicName } from "./topicName.js";

/** One message to send. */
export interface OutgoingMessage {
  readonly payload: Uint8Array;
  /** The message key: routes it to a partition, and on Key_Shared to a consumer. */
  readonly key?: string;
  /** Overrides the key for Key_Shared routing only. */
  readonly orderingKey?: Uint8Array;
  readonly properties?: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
  /** Milliseconds since the epoch, the application's own time for the message. */
  readonly eventTime?: number;
  /** Deliver no earlier than this (ms since the epoch); Shared and Key_Shared subscriptions honour it. Sent unbatched. */
  readonly deliverAt?: number;
  /** On a partitioned topic, send to this partition instead of routing by key. */
  readonly partition?: number;
}

/** Batching: messages sent close together travel as one broker entry. */
export interface BatchingOptions {
  /** At most this many messages per batch (default 1000). */
  readonly maxMessages?: number;
  /** At most this many payload bytes per batch, before compression (default 128 KiB). */
  readonly maxBytes?: number;
  /** A batch is sent at the latest this long after its first message (default 1 ms). */
  readonly maxDelayMs?: number;
  /**
   * One batch per key (default false), for Key_Shared subscriptions: the broker routes a whole entry
   * by one key, so a mixed-key batch would reach one consumer.
   */
  readonly keyBased?: boolean;
}

export interface ProducerOptions {
  readonly topic: string;
  /** A name for the producer; the broker assigns one when absent. Deduplication keys on it. */
  readonly producerName?: string;
  readonly accessMode?: keyof typeof ProducerAccessMode;
  /** `false` sends each message as its own entry. Default: batching with the defaults above. */
  readonly batching?: false | BatchingOptions;
  readonly compression?: Compression;
  /** How keys choose partitions (default JavaStringHash, the Java client's default). */
  readonly hashingScheme?: HashingScheme;
  /** A send not confirmed within this fails with `timeout` (default 30 s; 0: never). */
  readonly sendTimeoutMs?: number;
  /** Creates this subscription with the topic, so nothing sent is lost before a consumer comes. */
  readonly initialSubscriptionName?: string;
  /** Producer metadata, shown in the topic's stats. */
  readonly properties?: Readonly<Record<string, string>>;
}

type Resolve = (id: MessageId) => void;
type Reject = (error: Error) => void;

/**
 * Who waits for an entry's receipt: the sends' resolve and reject functions, index for index, kept
 * in two arrays rather than an object per message (the producer's profile showed its per-message
 * objects, and the collector behind them, as a large share).
 */
interface Waiters {
  readonly resolves: Resolve[];
  readonly rejects: Reject[];
}

function rejectAll(waiters: Waiters, error: Error): void {
  for (const reject of waiters.rejects) reject(error);
}

/** One entry in flight: what was (or will be) sent, and who waits for its receipt. */
interface OpSend {
  readonly sequenceId: bigint;
  readonly highestSequenceId: bigint;
  readonly numMessages: number;
  readonly batched: boolean;
  /** The whole SEND frame: the same bytes go again after a reconnect. */
  readonly frame: Buffer;
  readonly waiters: Waiters;
  readonly createdAt: number;
}

class Batch implements Waiters {
  readonly messages: OutgoingMessage[] = [];
  readonly resolves: Resolve[] = [];
  readonly rejects: Reject[] = [];
  bytes = 0;
}

function toKeyValues(
  properties: Readonly<Record<string, string>> | ReadonlyMap<string, string> | undefined,
): KeyValue[] | undefined {
  if (properties === undefined) return undefined;
  const entries = properties instanceof Map ? [...properties] : Object.entries(properties);
  if (entries.length === 0) return undefined;
  return entries.map(([key, value]) => ({ key, value }));
}

type State = "connecting" | "ready" | "closing" | "closed" | "failed";

/** A producer on one topic or one partition. */
export class PartitionProducer implements ProducerHandler {
  private state: State = "connecting";
  private connection: Connection | undefined;
  private readonly producerId: number;
  private producerName: string | undefined;
  private sequence = 0n;
  private sequenceAssigned = false;
  private maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE;
  private readonly pending = new Queue<OpSend>();
  private readonly batches = new Map<string, Batch>();
  private batchTimer: NodeJS.Timeout | undefined;
  private readonly timeoutTimer: NodeJS.Timeout | undefined;
  private readonly attacher: Attacher;
  private failure: Error | undefined;
  private readonly compression: number;
  private readonly batching: Required<BatchingOptions> | undefined;
  private readonly drainWaiters: (() => void)[] = [];
  /** How many times this producer attached to a broker (1 after creation). */
  connects = 0;

  constructor(
    host: ClientHost,
    readonly topic: string,
    readonly partition: number,
    private readonly options: ProducerOptions,
  ) {
    this.producerId = host.newProducerId();
    this.producerName = options.producerName;
    this.compression = compressionType(options.compression ?? "NONE");
    this.batching =
      options.batching === false
        ? undefined
        : {
            maxMessages: options.batching?.maxMessages ?? 1000,
            maxBytes: options.batching?.maxBytes ?? 128 * 1024,
            maxDelayMs: options.batching?.maxDelayMs ?? 1,
            keyBased: options.batching?.keyBased ?? false,
          };
    const sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    if (sendTimeoutMs > 0) {
      this.timeoutTimer = setInterval(
        () => this.failExpired(sendTimeoutMs),
        Math.max(50, Math.min(1000, sendTimeoutMs / 4)),
      );
      this.timeoutTimer.unref();
    }
    const target: AttachTarget = {
      topic,
      // Closing still attaches: what is pending must reach the broker before the producer closes.
      finished: () => this.state === "closed" || this.state === "failed",
      request: (connection) => this.register(connection),
      fail: (error) => this.fail(error),
    };
    // The previous incarnation may still hold the name for a moment after a disconnect.
    this.attacher = new Attacher(host, target, ServerError.ProducerBusy);
  }

  /** The name the broker knows this producer by. */
  get name(): string | undefined {
    return this.producerName;
  }

  /** Connects for the first time; rejects when the broker refuses or the operation times out. */
  async start(): Promise<void> {
    await loadCodecs();
    await this.attacher.start();
  }

  private async register(connection: Connection): Promise<Attachment> {
    const requestId = connection.newRequestId();
    connection.registerProducer(this.producerId, this);
    let answer: Awaited<ReturnType<Connection["request"]>>;
    try {
      answer = await connection.request(
        requestId,
        {
          type: CommandType.PRODUCER,
          producer: {
            topic: this.topic,
            producerId: this.producerId,
            requestId,
            ...(this.producerName === undefined ? {} : { producerName: this.producerName }),
            userProvidedProducerName: this.options.producerName !== undefined,
            epoch: BigInt(this.connects),
            producerAccessMode: ProducerAccessMode[this.options.accessMode ?? "Shared"],
            ...(this.options.initialSubscriptionName === undefined
              ? {}
              : { initialSubscriptionName: this.options.initialSubscriptionName }),
            ...(this.options.properties === undefined
              ? {}
              : { metadata: toKeyValues(this.options.properties)! }),
          },
        },
        `create producer on ${this.topic}`,
      );
    } catch (error) {
      connection.unregisterProducer(this.producerId);
      throw error;
    }
    const success = answer.producerSuccess!;
    return {
      release: () => connection.unregisterProducer(this.producerId),
      commit: () => {
        this.producerName = success.producerName;
        // With deduplication the broker remembers the last sequence id under this name; continue
        // after it.
        const last = success.lastSequenceId;
        if (!this.sequenceAssigned && last !== undefined && last >= 0n) this.sequence = last + 1n;
        this.connection = connection;
        this.maxMessageSize = connection.maxMessageSize;
        this.connects++;
        if (this.state === "connecting") this.state = "ready";
        // Everything waiting for a receipt goes again, in order; the broker drops what it already
        // has when deduplication is on, and otherwise the receipt order still matches.
        for (const op of this.pending) this.write(op);
      },
    };
  }

  /** Queues a message; resolves with its id once the broker confirms it is stored. */
  send(message: OutgoingMessage): Promise<MessageId> {
    if (this.state === "closing" || this.state === "closed")
      return Promise.reject(closedError(`producer on ${this.topic}`));
    if (this.failure) return Promise.reject(this.failure);
    // The broker drops the whole connection on an oversized frame: refuse here, before any byte goes.
    if (message.payload.length > this.maxMessageSize)
      return Promise.reject(this.tooLarge(message.payload.length));
    return new Promise<MessageId>((resolve, reject) => {
      if (this.batching === undefined || message.deliverAt !== undefined) {
        // Order holds across kinds: what is batched so far goes first.
        this.flushBatches();
        this.sendSingle(message, { resolves: [resolve], rejects: [reject] });
      } else {
        this.addToBatch(message, resolve, reject, this.batching);
      }
    });
  }

  private tooLarge(size: number): RustStreamError {
    return new RustStreamError(
      "publish-refused",
      `a message of ${size} bytes exceeds the broker's max_message_size of ${this.maxMessageSize} bytes on ${this.topic}; it was not sent (the broker would drop the connection)`,
    );
  }

  private addToBatch(
    message: OutgoingMessage,
    resolve: Resolve,
    reject: Reject,
    batching: Required<BatchingOptions>,
  ): void {
    const key = batching.keyBased ? batchKey(message) : "";
    let batch = this.batches.get(key);
    const size = message.payload.length;
    if (
      batch &&
      (batch.messages.length >= batching.maxMessages ||
        batch.bytes + size > Math.min(batching.maxBytes, this.maxMessageSize))
    ) {
      this.batches.delete(key);
      this.sendBatch(batch, key);
      batch = undefined;
    }
    if (!batch) {
      batch = new Batch();
      this.batches.set(key, batch);
    }
    batch.messages.push(message);
    batch.resolves.push(resolve);
    batch.rejects.push(reject);
    batch.bytes += size;
    if (batch.messages.length >= batching.maxMessages) {
      this.batches.delete(key);
      this.sendBatch(batch, key);
    }
    if (this.batches.size > 0 && this.batchTimer === undefined) {
      this.batchTimer = setTimeout(() => {
        this.batchTimer = undefined;
        this.flushBatches();
      }, batching.maxDelayMs);
    }
  }

  /** Sends every open batch now (in the order their first messages came). */
  flushBatches(): void {
    if (this.batchTimer !== undefined) {
      clearTimeout(this.batchTimer);
      this.batchTimer = undefined;
    }
    const batches = [...this.batches];
    this.batches.clear();
    for (const [key, batch] of batches) this.sendBatch(batch, key);
  }

  private nextSequence(count: number): bigint {
    const first = this.sequence;
    this.sequence += BigInt(count);
    this.sequenceAssigned = true;
    return first;
  }

  private metadataBase(sequenceId: bigint): MessageMetadata {
    return {
      producerName: this.producerName ?? "",
      sequenceId,
      publishTime: Date.now(),
    };
  }

  private sendSingle(message: OutgoingMessage, waiters: Waiters): void {
    const sequenceId = this.nextSequence(1);
    const metadata = this.metadataBase(sequenceId);
    applyMessageFields(metadata, message);
    if (message.deliverAt !== undefined) metadata.deliverAtTime = message.deliverAt;
    const payload = this.compressInto(metadata, message.payload, waiters);
    if (payload === undefined) return;
    this.enqueue(
      waiters,
      metadata,
      payload.length,
      copyOf(payload),
      sequenceId,
      sequenceId,
      1,
      false,
    );
  }

  private sendBatch(batch: Batch, key: string): void {
    const messages = batch.messages;
    const count = messages.length;
    if (count === 0) return;
    const first = this.nextSequence(count);
    const highest = first + BigInt(count - 1);
    // Each message's bytes are measured first and written once, into the frame itself (or, to be
    // compressed, into one payload). A message with only a payload, and a sequence id a double
    // holds, is written directly; any other goes through the codec into its own buffer.
    const direct = highest <= MAX_DIRECT_SEQUENCE;
    const firstNumber = Number(first);
    let encoded: (Uint8Array | undefined)[] | undefined;
    let length = 0;
    for (let i = 0; i < count; i++) {
      const message = messages[i]!;
      if (direct && carriesPayloadOnly(message)) {
        length += sizeAndSequenceEntryLength(message.payload.length, firstNumber + i);
        continue;
      }
      const single: SingleMessageMetadata = {
        payloadSize: message.payload.length,
        sequenceId: first + BigInt(i),
      };
      if (message.key !== undefined) single.partitionKey = message.key;
      if (message.orderingKey !== undefined) single.orderingKey = message.orderingKey;
      const properties = toKeyValues(message.properties);
      if (properties) single.properties = properties;
      if (message.eventTime !== undefined) single.eventTime = message.eventTime;
      const entry = encodeBatchEntry(single, message.payload);
      encoded ??= new Array<Uint8Array | undefined>(count);
      encoded[i] = entry;
      length += entry.length;
    }
    const writeEntries = (out: Buffer, at: number): void => {
      for (let i = 0; i < count; i++) {
        const entry = encoded?.[i];
        if (entry === undefined) {
          at = writeSizeAndSequenceEntry(out, at, messages[i]!.payload, firstNumber + i);
        } else {
          out.set(entry, at);
          at += entry.length;
        }
      }
    };
    const metadata = this.metadataBase(first);
    metadata.numMessagesInBatch = count;
    metadata.highestSequenceId = highest;
    // A key-based batch carries its key outside too: the broker routes the entry by it.
    const head = messages[0]!;
    if (this.batching?.keyBased && key !== "") {
      if (head.key !== undefined) metadata.partitionKey = head.key;
      if (head.orderingKey !== undefined) metadata.orderingKey = head.orderingKey;
    }
    // The payloads stay with the batch, not with the entry waiting for its receipt.
    const waiters: Waiters = { resolves: batch.resolves, rejects: batch.rejects };
    if (this.compression === CompressionType.NONE) {
      this.enqueue(waiters, metadata, length, writeEntries, first, highest, count, true);
      return;
    }
    const raw = Buffer.allocUnsafe(length);
    writeEntries(raw, 0);
    const payload = this.compressInto(metadata, raw, waiters);
    if (payload === undefined) return;
    this.enqueue(waiters, metadata, payload.length, copyOf(payload), first, highest, count, true);
  }

  /**
   * The payload compressed, or `undefined` once its sends are rejected: a codec that fails (one
   * that did not load, or ZSTD's check of its own output) fails these sends, never the timer that
   * flushed their batch.
   */
  private compressInto(
    metadata: MessageMetadata,
    payload: Uint8Array,
    waiters: Waiters,
  ): Uint8Array | undefined {
    if (this.compression === CompressionType.NONE) return payload;
    metadata.compression = this.compression;
    metadata.uncompressedSize = payload.length;
    try {
      return compress(this.compression, payload);
    } catch (error) {
      rejectAll(
        waiters,
        error instanceof Error ? error : new RustStreamError("publish-refused", String(error)),
      );
      return undefined;
    }
  }

  private enqueue(
    waiters: Waiters,
    metadata: MessageMetadata,
    payloadLength: number,
    writePayload: (frame: Buffer, at: number) => void,
    sequenceId: bigint,
    highestSequenceId: bigint,
    numMessages: number,
    batched: boolean,
  ): void {
    // The (compressed) payload against the limit, before anything is built.
    if (payloadLength > this.maxMessageSize) {
      rejectAll(waiters, this.tooLarge(payloadLength));
      return;
    }
    let frame: Buffer;
    try {
      frame = buildPayloadFrame(
        {
          type: CommandType.SEND,
          send: {
            producerId: this.producerId,
            sequenceId,
            numMessages,
            ...(batched ? { highestSequenceId } : {}),
          },
        },
        metadata,
        payloadLength,
        writePayload,
      );
    } catch (error) {
      const failure = new RustStreamError(
        "invalid-argument",
        `cannot encode the message: ${String(error)}`,
        {
          cause: error,
        },
      );
      rejectAll(waiters, failure);
      return;
    }
    // The whole frame against what the broker reads.
    if (frame.length > this.maxMessageSize + FRAME_PADDING) {
      rejectAll(waiters, this.tooLarge(payloadLength));
      return;
    }
    const op: OpSend = {
      sequenceId,
      highestSequenceId,
      numMessages,
      batched,
      frame,
      waiters,
      createdAt: Date.now(),
    };
    this.pending.push(op);
    if (this.state === "ready" || this.state === "closing") this.write(op);
  }

  private write(op: OpSend): void {
    this.connection?.sendFrame(op.frame);
  }

  onSendReceipt(receipt: CommandSendReceipt): void {
    const op = this.pending.peek();
    if (op === undefined || receipt.sequenceId < op.sequenceId) return; // for an entry already settled
    if (receipt.sequenceId > op.sequenceId) {
      // A receipt past the oldest entry: the two sides disagree on what was sent. Start over on a
      // new connection, which resends everything pending in order.
      this.connection?.close(
        new RustStreamError(
          "broker-failure",
          `producer on ${this.topic}: receipt for sequence ${receipt.sequenceId} while ${op.sequenceId} was expected`,
        ),
      );
      return;
    }
    this.pending.shift();
    const data = receipt.messageId;
    const ledger = data ? BigInt.asIntN(64, data.ledgerId) : -1n;
    const entry = data ? BigInt.asIntN(64, data.entryId) : -1n;
    const resolves = op.waiters.resolves;
    if (op.batched)
      for (let i = 0; i < resolves.length; i++)
        resolves[i]!(new MessageId(ledger, entry, this.partition, i, op.numMessages));
    else resolves[0]!(new MessageId(ledger, entry, this.partition));
    this.notifyDrained();
  }

  onSendError(error: CommandSendError): void {
    if (error.error === ServerError.ChecksumError) {
      // The bytes were damaged on the way; sending them again (after a reconnect) can succeed.
      this.connection?.close(serverFailure(`send on ${this.topic}`, error.error, error.message));
      return;
    }
    const op = this.pending.peek();
    if (op === undefined || op.sequenceId !== error.sequenceId) return;
    this.pending.shift();
    const failure = serverFailure(`send on ${this.topic}`, error.error, error.message);
    rejectAll(op.waiters, failure);
    this.notifyDrained();
  }

  onClosedByBroker(): void {
    this.disconnected();
  }

  onConnectionClosed(): void {
    this.disconnected();
  }

  private disconnected(): void {
    this.connection = undefined;
    if (this.state === "ready") this.state = "connecting";
    this.attacher.lost();
  }

  private fail(error: Error): void {
    this.failure = error;
    this.state = "failed";
    this.flushBatches();
    for (const op of this.pending.drain()) rejectAll(op.waiters, error);
    this.notifyDrained();
    this.shutdownTimers();
  }

  private failExpired(timeoutMs: number): void {
    const now = Date.now();
    let op = this.pending.peek();
    if (op === undefined || now - op.createdAt < timeoutMs) return;
    const error = new RustStreamError(
      "timeout",
      `send on ${this.topic}: no receipt within ${timeoutMs} ms (${this.state === "ready" ? "the broker did not confirm" : "not connected"})`,
    );
    // Everything older than the limit goes, oldest first; a late receipt for it is then ignored.
    while (op !== undefined && now - op.createdAt >= timeoutMs) {
      this.pending.shift();
      rejectAll(op.waiters, error);
      op = this.pending.peek();
    }
    this.notifyDrained();
  }

  private notifyDrained(): void {
    if (this.pending.length > 0) return;
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  /** Sends what is batched and resolves once every entry sent so far is confirmed or failed. */
  flush(): Promise<void> {
    this.flushBatches();
    if (this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** How many entries wait for a receipt. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Flushes, waits for the receipts, and closes the producer on the broker. */
  async close(): Promise<void> {
    if (this.state === "closed" || this.state === "closing") return;
    if (this.state !== "failed") {
      this.state = "closing";
      await this.flush();
    }
    this.state = "closed";
    this.shutdownTimers();
    const connection = this.connection;
    this.connection = undefined;
    for (const op of this.pending.drain())
      rejectAll(op.waiters, closedError(`producer on ${this.topic}`));
    if (connection && !connection.closed) {
      connection.unregisterProducer(this.producerId);
      const requestId = connection.newRequestId();
      await connection
        .request(
          requestId,
          {
            type: CommandType.CLOSE_PRODUCER,
            closeProducer: { producerId: this.producerId, requestId },
          },
          `close producer on ${this.topic}`,
        )
        .catch(() => undefined); // closing anyway; the broker drops it with the connection at worst
    }
  }

  private shutdownTimers(): void {
    if (this.timeoutTimer !== undefined) clearInterval(this.timeoutTimer);
    if (this.batchTimer !== undefined) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
  }
}

/** The largest sequence id the batch writer handles as a number (2^53 - 1). */
const MAX_DIRECT_SEQUENCE = BigInt(Number.MAX_SAFE_INTEGER);

/** True for a message with nothing but its payload (no key, properties or event time). */
function carriesPayloadOnly(message: OutgoingMessage): boolean {
  return (
    message.key === undefined &&
    message.orderingKey === undefined &&
    message.properties === undefined &&
    message.eventTime === undefined
  );
}

function copyOf(payload: Uint8Array): (frame: Buffer, at: number) => void {
  return (frame, at) => frame.set(payload, at);
}

function batchKey(message: OutgoingMessage): string {
  if (message.orderingKey !== undefined)
    return `o:${Buffer.from(message.orderingKey).toString("base64")}`;
  return message.key === undefined ? "" : `k:${message.key}`;
}

function applyMessageFields(metadata: MessageMetadata, message: OutgoingMessage): void {
  if (message.key !== undefined) metadata.partitionKey = message.key;
  if (message.orderingKey !== undefined) metadata.orderingKey = message.orderingKey;
  const properties = toKeyValues(message.properties);
  if (properties) metadata.properties = properties;
  if (message.eventTime !== undefined) metadata.eventTime = message.eventTime;
}

/** A producer on a topic, partitioned or not: keyed messages go to the partition the key hashes to. */
export class Producer {
  private roundRobin = 0;
  private closed = false;

  private constructor(
    /** The topic's full name. */
    readonly topic: string,
    /** The number of partitions; 0 for a non-partitioned topic. */
    readonly partitions: number,
    private readonly producers: PartitionProducer[],
    private readonly hashingScheme: HashingScheme,
  ) {
    this.roundRobin = Math.floor(Math.random() * Math.max(1, producers.length));
  }

  /** Looks the topic up and connects a producer to it (one per partition). */
  static async create(host: ClientHost, options: ProducerOptions): Promise<Producer> {
    const name = parseTopicName(options.topic);
    const partitions = name.partition >= 0 ? 0 : await host.partitions(name.full);
    const producers =
      partitions === 0
        ? [new PartitionProducer(host, name.full, name.partition, options)]
        : Array.from(
            { length: partitions },
            (_, i) => new PartitionProducer(host, partitionTopicName(name, i), i, options),
          );
    const started = await Promise.allSettled(producers.map((p) => p.start()));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) {
      await Promise.all(producers.map((p) => p.close()));
      throw failed.reason;
    }
    return new Producer(
      name.full,
      partitions,
      producers,
      options.hashingScheme ?? "JavaStringHash",
    );
  }

  /** The producer of each partition (one for a non-partitioned topic). */
  get partitionProducers(): readonly PartitionProducer[] {
    return this.producers;
  }

  /** The partition a message goes to: its explicit partition, its key's hash, or the next in turn. */
  choosePartition(message: OutgoingMessage): number {
    if (this.partitions === 0) return 0;
    if (message.partition !== undefined) {
      if (
        !Number.isInteger(message.partition) ||
        message.partition < 0 ||
        message.partition >= this.partitions
      )
        throw new RustStreamError(
          "invalid-argument",
          `partition ${message.partition} does not exist on ${this.topic} (${this.partitions} partitions)`,
        );
      return message.partition;
    }
    if (message.key !== undefined)
      return partitionForKey(message.key, this.partitions, this.hashingScheme);
    this.roundRobin = (this.roundRobin + 1) % this.partitions;
    return this.roundRobin;
  }

  /** Sends a message; resolves with its id once the broker has stored it. */
  send(message: OutgoingMessage): Promise<MessageId> {
    if (this.closed) return Promise.reject(closedError(`producer on ${this.topic}`));
    let index: number;
    try {
      index = this.choosePartition(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.producers[index]!.send(message);
  }

  /** Sends what is batched and waits for every receipt outstanding. */
  async flush(): Promise<void> {
    await Promise.all(this.producers.map((p) => p.flush()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.producers.map((p) => p.close()));
  }
}

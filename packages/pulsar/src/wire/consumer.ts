// Consumers. A PartitionConsumer is one SUBSCRIBE on one topic (or one partition): the broker pushes
// MESSAGE frames while the consumer has flow permits, so the consumer grants its receiver queue's
// size up front and grants again, in one FLOW, once half of it has been taken. Batch entries are
// unpacked here, one permit per message. Acks go out without an answer awaited; a batch entry is
// acked once all its messages are (the broker acks entries). A Consumer reads a topic's partitions.
import { RustStreamError } from "@ruststream/core";
import { Attacher, type Attachment, type AttachTarget } from "./attacher.js";
import { Backoff } from "./backoff.js";
import { readBatch } from "./batch.js";
import {
  AckType,
  CommandType,
  CompressionType,
  InitialPosition,
  KeySharedMode,
  ServerError,
  SubType,
  ValidationError,
} from "./commands/enums.js";
import type {
  BaseCommand,
  CommandMessage,
  KeySharedMeta,
  KeyValue,
  MessageIdData,
} from "./commands/shapes.js";
import { decompress, loadCodecs } from "./compression.js";
import type { Connection, ConsumerHandler } from "./connection.js";
import { closedError } from "./errors.js";
import type { PayloadSection } from "./frame.js";
import type { ClientHost } from "./host.js";
import { MessageId } from "./messageId.js";
import { Queue } from "./queue.js";
import { parseTopicName, partitionTopicName } from "./topicName.js";
import type { UndecodableEntry, UndecodableHandler, UndecodableReason } from "./undecodable.js";

export type SubscriptionType = keyof typeof SubType;

export interface ConsumerOptions {
  readonly topic: string;
  readonly subscription: string;
  /** Default Exclusive, as in the Java client. */
  readonly subscriptionType?: SubscriptionType;
  readonly consumerName?: string;
  /** Messages the broker may push ahead, per partition (default 1000). */
  readonly receiverQueueSize?: number;
  /** Where a new subscription starts (default Latest). */
  readonly initialPosition?: keyof typeof InitialPosition;
  /** Key_Shared settings (default AUTO_SPLIT, in-order delivery). */
  readonly keyShared?: {
    readonly mode?: keyof typeof KeySharedMode;
    readonly hashRanges?: readonly { readonly start: number; readonly end: number }[];
    readonly allowOutOfOrderDelivery?: boolean;
  };
  /** False for a non-durable subscription, which the broker forgets when its consumers leave. */
  readonly durable?: boolean;
  readonly readCompacted?: boolean;
  readonly priorityLevel?: number;
  /** How long a nacked message waits before its redelivery is asked for (default 0: at once). */
  readonly negativeAckDelayMs?: number;
  /** Consumer metadata, shown in the topic's stats. */
  readonly properties?: Readonly<Record<string, string>>;
  readonly subscriptionProperties?: Readonly<Record<string, string>>;
  /**
   * Where entries that cannot be decoded (checksum, decompression, batch) go before they are
   * acked: a dead letter. Without it they are acked with the validation error, as Pulsar's Java
   * client does. Either way each is logged at error with its message id and the reason.
   */
  readonly undecodable?: UndecodableHandler;
}

interface BatchTracker {
  /** The entry's key in the consumer's trackers. */
  readonly key: string;
  readonly acked: Uint8Array;
  remaining: number;
}

/**
 * What the messages of one broker entry share: its position, and which partition consumer (and
 * which subscribe of it) it came through. One per entry rather than a message id, a map entry and
 * an ack key per message: the consumer's profile showed that per-message work, and the collector
 * behind it, as its largest share.
 */
export interface ReceivedEntry {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
  /** -1 on a non-partitioned topic. */
  readonly partition: number;
  /** The number of messages in the batch, 0 when not batched. */
  readonly batchSize: number;
  readonly consumer: PartitionConsumer;
  readonly consumerId: number;
  /** A batch's acks so far, shared with redeliveries of the same entry. */
  readonly tracker: BatchTracker | undefined;
}

// Reads a message's entry, kept off the public Message type; undefined for anything else.
let entryOf: (message: unknown) => ReceivedEntry | undefined;

/** A received message. */
export class Message {
  readonly #entry: ReceivedEntry;
  #messageId: MessageId | undefined;

  static {
    entryOf = (message) =>
      typeof message === "object" && message !== null && #entry in message
        ? (message as Message).#entry
        : undefined;
  }

  constructor(
    entry: ReceivedEntry,
    /** Its index in the batch; -1 when not sent in a batch. */
    readonly batchIndex: number,
    /** The topic it came from: a partition's name on a partitioned topic. */
    readonly topic: string,
    readonly payload: Uint8Array,
    readonly properties: ReadonlyMap<string, string>,
    readonly publishTime: number,
    /** 0 on first delivery; counted by the broker on Shared and Key_Shared subscriptions. */
    readonly redeliveryCount: number,
    readonly producerName: string,
    readonly sequenceId: bigint,
    readonly key: string | undefined,
    readonly orderingKey: Uint8Array | undefined,
    readonly eventTime: number | undefined,
  ) {
    this.#entry = entry;
  }

  /** Made on first use: acks read the entry, and most messages are only acked. */
  get messageId(): MessageId {
    const e = this.#entry;
    this.#messageId ??= new MessageId(
      e.ledgerId,
      e.entryId,
      e.partition,
      this.batchIndex,
      e.batchSize,
    );
    return this.#messageId;
  }

  /** The partition it came from; -1 on a non-partitioned topic. */
  get partition(): number {
    return this.#entry.partition;
  }
}

/** Where a partition consumer tells its Consumer that messages are queued. */
interface MessageSink {
  notify(): void;
}

function toKeyValues(record: Readonly<Record<string, string>> | undefined): KeyValue[] | undefined {
  if (record === undefined) return undefined;
  return Object.entries(record).map(([key, value]) => ({ key, value }));
}

// Most messages carry no properties: they share one empty map rather than each allocating its own
// (the type is read-only, so no reader can fill it for the others).
const noProperties: ReadonlyMap<string, string> = new Map<string, string>();

function propertiesOf(list: KeyValue[] | undefined): ReadonlyMap<string, string> {
  if (list === undefined || list.length === 0) return noProperties;
  const map = new Map<string, string>();
  for (const { key, value } of list) map.set(key, value);
  return map;
}

const entryKey = (ledgerId: bigint, entryId: bigint): string => `${ledgerId}:${entryId}`;

type State = "connecting" | "ready" | "closed" | "failed";

/** A consumer of one topic or one partition. */
export class PartitionConsumer implements ConsumerHandler {
  private state: State = "connecting";
  private connection: Connection | undefined;
  private consumerId = -1;
  private readonly queue = new Queue<Message>();
  private permitsToReturn = 0;
  private epoch = 0n;
  private readonly trackers = new Map<string, BatchTracker>();
  private pendingAcks: MessageIdData[] = [];
  private ackScheduled = false;
  private readonly nacked = new Map<string, MessageIdData>();
  private nackTimer: NodeJS.Timeout | undefined;
  private readonly attacher: Attacher;
  private seekingConsumerId: number | undefined;
  private failure: Error | undefined;
  private readonly readyWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private readonly subType: number;
  private readonly receiverQueueSize: number;
  /** How many times this consumer subscribed (1 after creation). */
  connects = 0;
  /** True once the broker said the topic is terminated and everything was delivered. */
  reachedEndOfTopic = false;
  /** On a Failover subscription, whether this consumer is the active one. */
  active: boolean | undefined;
  /**
   * Entries that could not be decoded (a bad checksum, payload or batch), none of whose messages
   * was handed out: acked with the validation error, or handed to `options.undecodable`.
   */
  discarded = 0;
  /** Spaces out redeliveries of undecodable entries whose handler keeps failing. */
  private readonly undecodableBackoff: Backoff;

  constructor(
    private readonly host: ClientHost,
    private readonly sink: MessageSink,
    readonly topic: string,
    readonly partition: number,
    private readonly options: ConsumerOptions,
  ) {
    this.subType = SubType[options.subscriptionType ?? "Exclusive"];
    this.receiverQueueSize = Math.max(1, options.receiverQueueSize ?? 1000);
    this.undecodableBackoff = new Backoff(host.backoff);
    const target: AttachTarget = {
      topic,
      finished: () => this.state === "closed" || this.state === "failed",
      request: (connection) => this.subscribe(connection),
      fail: (error) => this.fail(error),
    };
    // After a disconnect the broker may still count the previous consumer for a moment.
    this.attacher = new Attacher(host, target, ServerError.ConsumerBusy);
  }

  /** True on Shared and Key_Shared, where messages are redelivered one by one and counted. */
  get sharesMessages(): boolean {
    return this.subType === SubType.Shared || this.subType === SubType.Key_Shared;
  }

  async start(): Promise<void> {
    await loadCodecs();
    await this.attacher.start();
  }

  private async subscribe(connection: Connection): Promise<Attachment> {
    // A new id per subscribe: a MESSAGE still in flight for an earlier one finds no handler and is
    // dropped, rather than mistaken for one of this subscription's.
    const consumerId = this.host.newConsumerId();
    const requestId = connection.newRequestId();
    connection.registerConsumer(consumerId, this);
    const o = this.options;
    let keySharedMeta: KeySharedMeta | undefined;
    if (this.subType === SubType.Key_Shared) {
      keySharedMeta = { keySharedMode: KeySharedMode[o.keyShared?.mode ?? "AUTO_SPLIT"] };
      if (o.keyShared?.hashRanges)
        keySharedMeta.hashRanges = o.keyShared.hashRanges.map((r) => ({ ...r }));
      if (o.keyShared?.allowOutOfOrderDelivery !== undefined)
        keySharedMeta.allowOutOfOrderDelivery = o.keyShared.allowOutOfOrderDelivery;
    }
    try {
      await connection.request(
        requestId,
        {
          type: CommandType.SUBSCRIBE,
          subscribe: {
            topic: this.topic,
            subscription: o.subscription,
            subType: this.subType,
            consumerId,
            requestId,
            ...(o.consumerName === undefined ? {} : { consumerName: o.consumerName }),
            ...(o.priorityLevel === undefined ? {} : { priorityLevel: o.priorityLevel }),
            durable: o.durable ?? true,
            ...(o.properties === undefined ? {} : { metadata: toKeyValues(o.properties)! }),
            ...(o.readCompacted === undefined ? {} : { readCompacted: o.readCompacted }),
            initialPosition: InitialPosition[o.initialPosition ?? "Latest"],
            ...(keySharedMeta === undefined ? {} : { keySharedMeta }),
            ...(o.subscriptionProperties === undefined
              ? {}
              : { subscriptionProperties: toKeyValues(o.subscriptionProperties)! }),
            consumerEpoch: this.epoch,
          },
        },
        `subscribe ${o.subscription} on ${this.topic}`,
      );
    } catch (error) {
      connection.unregisterConsumer(consumerId);
      throw error;
    }
    return {
      release: () => connection.unregisterConsumer(consumerId),
      commit: () => this.subscribed(connection, consumerId),
    };
  }

  private subscribed(connection: Connection, consumerId: number): void {
    this.consumerId = consumerId;
    this.connection = connection;
    this.connects++;
    // The broker redelivers whatever the previous subscribe had pushed and was not acked, so what
    // is still queued from it would come twice; drop it, and grant the whole queue again.
    this.queue.drain();
    this.permitsToReturn = 0;
    // Acks made while no subscribe was live go out before the FLOW, so the broker applies them
    // before it redelivers: those messages were handled and do not come again.
    this.flushAcks();
    connection.send({
      type: CommandType.FLOW,
      flow: { consumerId, messagePermits: this.receiverQueueSize },
    });
    this.state = "ready";
    for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
  }

  onMessage(command: CommandMessage, section: PayloadSection): void {
    if (this.state !== "ready" || command.consumerId !== this.consumerId) return;
    const data = command.messageId;
    const metadata = section.metadata;
    const count = metadata.numMessagesInBatch;
    if (command.consumerEpoch !== undefined && command.consumerEpoch < this.epoch) {
      // Pushed before a redelivery we asked for: it comes again, with the new epoch.
      this.returnPermits(count ?? 1);
      return;
    }
    if (this.seekingConsumerId === command.consumerId) {
      this.returnPermits(count ?? 1);
      return;
    }
    if (!section.checksumValid) {
      this.undecodable(
        command,
        section,
        "ChecksumMismatch",
        "the CRC-32C over its metadata and payload does not match",
      );
      return;
    }
    let payload = section.payload;
    const compression = metadata.compression ?? CompressionType.NONE;
    if (compression !== CompressionType.NONE) {
      try {
        payload = decompress(compression, payload, metadata.uncompressedSize ?? 0);
      } catch (error) {
        this.undecodable(command, section, "DecompressionError", error);
        return;
      }
    }
    const ledgerId = BigInt.asIntN(64, data.ledgerId);
    const entryId = BigInt.asIntN(64, data.entryId);
    const redeliveryCount = command.redeliveryCount ?? 0;
    if (count === undefined) {
      const entry: ReceivedEntry = {
        ledgerId,
        entryId,
        partition: this.partition,
        batchSize: 0,
        consumer: this,
        consumerId: this.consumerId,
        tracker: undefined,
      };
      const message = new Message(
        entry,
        -1,
        this.topic,
        payload,
        propertiesOf(metadata.properties),
        metadata.publishTime,
        redeliveryCount,
        metadata.producerName,
        metadata.sequenceId,
        metadata.partitionKey,
        metadata.orderingKey,
        metadata.eventTime || undefined,
      );
      this.queue.push(message);
      this.sink.notify();
      return;
    }
    let entries: ReturnType<typeof readBatch>;
    try {
      entries = readBatch(payload, count);
    } catch (error) {
      this.undecodable(command, section, "BatchDeSerializeError", error);
      return;
    }
    const key = entryKey(ledgerId, entryId);
    let tracker = this.trackers.get(key);
    if (!tracker) {
      tracker = { key, acked: new Uint8Array(count), remaining: count };
      this.trackers.set(key, tracker);
    }
    const entry: ReceivedEntry = {
      ledgerId,
      entryId,
      partition: this.partition,
      batchSize: count,
      consumer: this,
      consumerId: this.consumerId,
      tracker,
    };
    let skipped = 0;
    entries.forEach((item, index) => {
      // Skip what was acked before this entry came back, and what the broker marks as acked.
      const ackedByBroker = command.ackSet !== undefined && !bitSet(command.ackSet, index);
      if (tracker.acked[index] || item.metadata.compactedOut || ackedByBroker) {
        skipped++;
        return;
      }
      const single = item.metadata;
      const message = new Message(
        entry,
        index,
        this.topic,
        item.payload,
        propertiesOf(single.properties),
        metadata.publishTime,
        redeliveryCount,
        metadata.producerName,
        single.sequenceId ?? metadata.sequenceId + BigInt(index),
        single.partitionKey,
        single.orderingKey,
        single.eventTime || undefined,
      );
      this.queue.push(message);
    });
    if (skipped > 0) this.returnPermits(skipped);
    if (skipped < count) this.sink.notify();
  }

  /**
   * An entry none of whose messages can be handed out. Logged at error either way; then handed to
   * `options.undecodable` and acked once it is kept there (redelivered if that fails), or, with no
   * handler, acked with the validation error as Pulsar's Java client does.
   */
  private undecodable(
    command: CommandMessage,
    section: PayloadSection,
    reason: UndecodableReason,
    error: unknown,
  ): void {
    const data = command.messageId;
    const count = section.metadata.numMessagesInBatch;
    this.discarded++;
    this.returnPermits(count ?? 1);
    const id = new MessageId(
      BigInt.asIntN(64, data.ledgerId),
      BigInt.asIntN(64, data.entryId),
      this.partition,
      -1,
      count ?? 0,
    );
    const detail = error instanceof Error ? error.message : String(error);
    const fields = {
      topic: this.topic,
      subscription: this.options.subscription,
      messageId: id.toString(),
      reason,
      error: detail,
      messages: count ?? 1,
    };
    const handler = this.options.undecodable;
    if (handler === undefined) {
      this.host.log.error(
        fields,
        "a Pulsar entry cannot be decoded: acked without delivering its messages (no dead letter declared; Pulsar's Java client drops such entries too)",
      );
      this.connection?.send({
        type: CommandType.ACK,
        ack: {
          consumerId: this.consumerId,
          ackType: AckType.Individual,
          messageId: [{ ledgerId: data.ledgerId, entryId: data.entryId }],
          validationError: ValidationError[reason],
        },
      });
      return;
    }
    this.host.log.error(
      { ...fields, deadLetter: handler.destination },
      "a Pulsar entry cannot be decoded: moving it as it arrived to the dead letter",
    );
    const entry: UndecodableEntry = {
      topic: this.topic,
      subscription: this.options.subscription,
      messageId: id,
      reason,
      error: detail,
      metadata: section.metadata,
      // The frame's bytes may be reused once this turn is over; the handler works later.
      payload: section.payload.slice(),
      redeliveryCount: command.redeliveryCount ?? 0,
    };
    const ids = { ledgerId: data.ledgerId, entryId: data.entryId };
    // Through a promise even if handle() throws at once: a handler's failure is the entry's, not
    // the connection's (this runs inside the socket's read).
    Promise.resolve(entry)
      .then((e) => handler.handle(e))
      .then(
        () => {
          this.undecodableBackoff.reset();
          // An ordinary ack, through whichever subscribe is live by then (attach sends it if none).
          this.pendingAcks.push(ids);
          this.scheduleFlush();
        },
        (failure: unknown) => {
          // Redelivered after a backoff, so a dead letter that stays unwritable is not hammered
          // (nor the log); unacked, the entry stays on the subscription and is never lost.
          const delay = this.undecodableBackoff.next();
          this.host.log.error(
            {
              ...fields,
              deadLetter: handler.destination,
              failure: String(failure),
              retryInMs: delay,
            },
            "moving an undecodable Pulsar entry to the dead letter failed: it is redelivered",
          );
          const redeliver = (): void => {
            if (this.state === "closed" || this.state === "failed") return;
            if (!this.sharesMessages) {
              this.redeliverAll();
              return;
            }
            this.nacked.set(entryKey(id.ledgerId, id.entryId), ids);
            this.nackTimer ??= setTimeout(
              () => this.flushNacks(),
              this.options.negativeAckDelayMs ?? 0,
            );
          };
          setTimeout(redeliver, delay).unref();
        },
      );
  }

  /** How many messages are queued here. */
  get queued(): number {
    return this.queue.length;
  }

  /** Takes the next queued message, returning its permit. */
  take(): Message | undefined {
    const message = this.queue.shift();
    if (message) this.returnPermits(1);
    return message;
  }

  private returnPermits(count: number): void {
    this.permitsToReturn += count;
    if (this.permitsToReturn >= this.flowThreshold) this.scheduleFlush();
  }

  /** Permits go back in one FLOW once half the receiver queue's worth was taken. */
  private get flowThreshold(): number {
    return Math.max(1, this.receiverQueueSize >> 1);
  }

  /**
   * Acks and returned permits go out at the end of the event loop's turn, in one socket write:
   * writing the FLOW as each half queue was taken cost a system call of its own, which the
   * consumer's profile showed as the largest single share of its CPU time.
   */
  private scheduleFlush(): void {
    if (this.ackScheduled) return;
    this.ackScheduled = true;
    setImmediate(() => this.flushAcks());
  }

  ack(message: Message): void {
    const entry = entryOf(message)!;
    const index = message.batchIndex;
    // A tracker a seek cleared no longer counts: the message is acked on its own, as before.
    const tracker = entry.tracker;
    if (index >= 0 && tracker !== undefined && this.trackers.get(tracker.key) === tracker) {
      if (!tracker.acked[index]) {
        tracker.acked[index] = 1;
        tracker.remaining--;
      }
      if (tracker.remaining > 0) return; // the broker acks whole entries: wait for the rest
      this.trackers.delete(tracker.key);
    }
    this.pendingAcks.push({
      ledgerId: BigInt.asUintN(64, entry.ledgerId),
      entryId: BigInt.asUintN(64, entry.entryId),
    });
    // Acks made in one turn of the event loop travel in one ACK command.
    this.scheduleFlush();
  }

  /** Sends the acks made so far, then the permits to return if they reached the threshold. */
  private flushAcks(): void {
    this.ackScheduled = false;
    // Without a live subscribe the acks wait for the next one (attach sends them): the broker
    // redelivers every unacked message to it, and these were handled. An ack of a message the
    // broker already forgot is harmless. The next subscribe grants the whole queue anew.
    const connection = this.connection;
    if (connection === undefined) return;
    const commands: BaseCommand[] = [];
    if (this.pendingAcks.length > 0) {
      commands.push({
        type: CommandType.ACK,
        ack: {
          consumerId: this.consumerId,
          ackType: AckType.Individual,
          messageId: this.pendingAcks,
        },
      });
    }
    // After the acks: the broker applies them before it pushes more.
    const permits = this.permitsToReturn;
    if (permits >= this.flowThreshold) {
      commands.push({
        type: CommandType.FLOW,
        flow: { consumerId: this.consumerId, messagePermits: permits },
      });
    }
    if (commands.length === 0 || !connection.sendAll(commands)) return;
    if (this.pendingAcks.length > 0) this.pendingAcks = [];
    if (permits >= this.flowThreshold) this.permitsToReturn -= permits;
  }

  ackCumulative(message: Message): void {
    if (this.sharesMessages)
      throw new RustStreamError(
        "invalid-argument",
        "cumulative acknowledgement is not allowed on Shared and Key_Shared subscriptions; ack each message",
      );
    const id = message.messageId;
    const ledgerId = id.ledgerId;
    let entryId = id.entryId;
    if (id.batchIndex >= 0 && id.batchIndex < id.batchSize - 1) {
      // Part of a batch: the entry before is acked now, this one's indexes up to here locally.
      const key = entryKey(id.ledgerId, id.entryId);
      const tracker = this.trackers.get(key) ?? {
        key,
        acked: new Uint8Array(id.batchSize),
        remaining: id.batchSize,
      };
      for (let i = 0; i <= id.batchIndex; i++)
        if (!tracker.acked[i]) {
          tracker.acked[i] = 1;
          tracker.remaining--;
        }
      this.trackers.set(key, tracker);
      if (entryId === 0n) return;
      entryId -= 1n;
    }
    for (const [key] of this.trackers) {
      const [l, e] = key.split(":").map(BigInt) as [bigint, bigint];
      if (l < ledgerId || (l === ledgerId && e <= entryId)) this.trackers.delete(key);
    }
    this.flushAcks();
    this.connection?.send({
      type: CommandType.ACK,
      ack: {
        consumerId: this.consumerId,
        ackType: AckType.Cumulative,
        messageId: [
          { ledgerId: BigInt.asUintN(64, ledgerId), entryId: BigInt.asUintN(64, entryId) },
        ],
      },
    });
  }

  /**
   * Asks for the message again. Shared and Key_Shared: its entry is redelivered (to any consumer)
   * with the broker's redelivery count one higher. Exclusive and Failover: the broker cannot
   * redeliver single messages there, so it rewinds to the first unacked message and everything
   * unacked comes again; what is queued here is dropped.
   */
  nack(message: Message): void {
    if (!this.sharesMessages) {
      this.redeliverAll();
      return;
    }
    const id = message.messageId;
    this.nacked.set(entryKey(id.ledgerId, id.entryId), {
      ledgerId: BigInt.asUintN(64, id.ledgerId),
      entryId: BigInt.asUintN(64, id.entryId),
    });
    if (this.nackTimer === undefined)
      this.nackTimer = setTimeout(() => this.flushNacks(), this.options.negativeAckDelayMs ?? 0);
  }

  private flushNacks(): void {
    this.nackTimer = undefined;
    if (this.nacked.size === 0) return;
    const messageIds = [...this.nacked.values()];
    this.nacked.clear();
    this.flushAcks();
    this.connection?.send({
      type: CommandType.REDELIVER_UNACKNOWLEDGED_MESSAGES,
      redeliverUnacknowledgedMessages: { consumerId: this.consumerId, messageIds },
    });
  }

  /** Asks the broker to redeliver everything this consumer has not acked. */
  redeliverAll(): void {
    // Acks made before the nack must reach the broker before the rewind, or it redelivers them.
    this.flushAcks();
    // A new epoch marks what the broker pushed before the request as stale when it arrives.
    this.epoch++;
    const dropped = this.queue.drain().length;
    if (dropped > 0) this.returnPermits(dropped);
    this.connection?.send({
      type: CommandType.REDELIVER_UNACKNOWLEDGED_MESSAGES,
      redeliverUnacknowledgedMessages: { consumerId: this.consumerId, consumerEpoch: this.epoch },
    });
  }

  /**
   * Moves the subscription to a message id or a publish time (ms). The broker disconnects the
   * subscription's consumers to move its cursor; this consumer resubscribes, and what was queued or
   * still arrives from before the move is dropped.
   */
  async seek(target: MessageId | number): Promise<void> {
    await this.ready();
    const connection = this.connection!;
    const consumerId = this.consumerId;
    this.flushAcks();
    const requestId = connection.newRequestId();
    this.seekingConsumerId = consumerId;
    this.queue.drain();
    try {
      await connection.request(
        requestId,
        {
          type: CommandType.SEEK,
          seek:
            typeof target === "number"
              ? { consumerId, requestId, messagePublishTime: target }
              : {
                  consumerId,
                  requestId,
                  messageId: {
                    ledgerId: BigInt.asUintN(64, target.ledgerId),
                    entryId: BigInt.asUintN(64, target.entryId),
                    ...(target.batchIndex >= 0 ? { batchIndex: target.batchIndex } : {}),
                  },
                },
        },
        `seek ${this.options.subscription} on ${this.topic}`,
      );
    } finally {
      this.seekingConsumerId = undefined;
    }
    // Anything queued under the consumer id that sought is from before the move.
    if (this.consumerId === consumerId) {
      const kept = this.queue.drain().filter((m) => entryOf(m)?.consumerId !== consumerId);
      for (const message of kept) this.queue.push(message);
    }
    this.trackers.clear();
  }

  /**
   * The id of the last message the broker stored on this topic or partition (ledger -1 on one that
   * never held a message): what a seek checks an id against, since the broker itself accepts any.
   */
  async lastMessageId(): Promise<MessageId> {
    await this.ready();
    const connection = this.connection!;
    const requestId = connection.newRequestId();
    const answer = await connection.request(
      requestId,
      {
        type: CommandType.GET_LAST_MESSAGE_ID,
        getLastMessageId: { consumerId: this.consumerId, requestId },
      },
      `get the last message id of ${this.topic}`,
    );
    const data = answer.getLastMessageIdResponse!.lastMessageId;
    return MessageId.fromData(data, this.partition);
  }

  /** Resolves once subscribed (at once when it is); rejects when closed or failed. */
  ready(): Promise<void> {
    if (this.state === "ready") return Promise.resolve();
    if (this.state === "closed") return Promise.reject(closedError(`consumer on ${this.topic}`));
    if (this.state === "failed")
      return Promise.reject(this.failure ?? closedError(`consumer on ${this.topic}`));
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  onActiveConsumerChange(change: { isActive?: boolean }): void {
    this.active = change.isActive ?? false;
  }

  onReachedEndOfTopic(): void {
    this.reachedEndOfTopic = true;
  }

  onClosedByBroker(): void {
    this.disconnected();
  }

  onConnectionClosed(): void {
    this.disconnected();
  }

  private disconnected(): void {
    this.connection = undefined;
    // What is queued came through the subscribe that just ended: the broker redelivers it to the
    // next one, so handing it out now would only hand it out twice.
    this.queue.drain();
    if (this.state === "ready") this.state = "connecting";
    this.attacher.lost();
  }

  private fail(error: Error): void {
    this.failure = error;
    this.state = "failed";
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(error);
    this.sink.notify();
  }

  /** Why this consumer stopped for good, if it did. */
  get failed(): Error | undefined {
    return this.failure;
  }

  async unsubscribe(): Promise<void> {
    await this.ready();
    const connection = this.connection!;
    const requestId = connection.newRequestId();
    await connection.request(
      requestId,
      { type: CommandType.UNSUBSCRIBE, unsubscribe: { consumerId: this.consumerId, requestId } },
      `unsubscribe ${this.options.subscription} from ${this.topic}`,
    );
    await this.close();
  }

  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.flushAcks();
    if (this.nackTimer !== undefined) clearTimeout(this.nackTimer);
    this.flushNacks();
    this.state = "closed";
    for (const waiter of this.readyWaiters.splice(0))
      waiter.reject(closedError(`consumer on ${this.topic}`));
    this.queue.drain();
    const connection = this.connection;
    this.connection = undefined;
    if (connection && !connection.closed) {
      connection.unregisterConsumer(this.consumerId);
      const requestId = connection.newRequestId();
      await connection
        .request(
          requestId,
          {
            type: CommandType.CLOSE_CONSUMER,
            closeConsumer: { consumerId: this.consumerId, requestId },
          },
          `close consumer on ${this.topic}`,
        )
        .catch(() => undefined);
    }
    this.sink.notify();
  }

  get closed(): boolean {
    return this.state === "closed";
  }
}

function bitSet(words: bigint[], index: number): boolean {
  const word = words[index >> 6];
  return word !== undefined && ((word >> BigInt(index & 63)) & 1n) === 1n;
}

interface Waiter {
  readonly resolve: (message: Message) => void;
  readonly reject: (error: Error) => void;
  cancel?: () => void;
}

/** A consumer on a topic, partitioned or not: one subscription, messages from every partition. */
export class Consumer implements MessageSink {
  private readonly waiters = new Queue<Waiter>();
  private readonly listeners = new Set<() => void>();
  private next = 0;
  private closed = false;
  private consumers: PartitionConsumer[] = [];

  private constructor(
    readonly topic: string,
    readonly subscription: string,
    /** The number of partitions; 0 for a non-partitioned topic. */
    readonly partitions: number,
  ) {}

  /** Subscribes to the topic (every partition of a partitioned one). */
  static async subscribe(host: ClientHost, options: ConsumerOptions): Promise<Consumer> {
    if (options.subscription === "")
      throw new RustStreamError("invalid-argument", "a subscription name must not be empty");
    const name = parseTopicName(options.topic);
    const partitions = name.partition >= 0 ? 0 : await host.partitions(name.full);
    const consumer = new Consumer(name.full, options.subscription, partitions);
    consumer.consumers =
      partitions === 0
        ? [new PartitionConsumer(host, consumer, name.full, name.partition, options)]
        : Array.from(
            { length: partitions },
            (_, i) =>
              new PartitionConsumer(host, consumer, partitionTopicName(name, i), i, options),
          );
    const started = await Promise.allSettled(consumer.consumers.map((c) => c.start()));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) {
      await Promise.all(consumer.consumers.map((c) => c.close()));
      throw failed.reason;
    }
    return consumer;
  }

  /** The consumer of each partition (one for a non-partitioned topic). */
  get partitionConsumers(): readonly PartitionConsumer[] {
    return this.consumers;
  }

  /** Messages received and not yet taken. */
  get queued(): number {
    return this.consumers.reduce((n, c) => n + c.queued, 0);
  }

  notify(): void {
    this.serveWaiters();
    // After the waiters: a listener pulls with tryReceive, and a waiter asked first.
    for (const listener of this.listeners) listener();
  }

  /**
   * Calls `onReadable` whenever a message may be waiting, or the consumer closed or failed: for a
   * reader that pulls with {@link Consumer.tryReceive} from several consumers at once. Returns the
   * call that stops it.
   */
  listen(onReadable: () => void): () => void {
    this.listeners.add(onReadable);
    return () => this.listeners.delete(onReadable);
  }

  /**
   * The next queued message without waiting, or `undefined`; throws when the consumer is closed or
   * one of its partitions failed for good.
   */
  tryReceive(): Message | undefined {
    if (this.closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    const failure = this.failure();
    if (failure) throw failure;
    if (this.waiters.length > 0) return undefined;
    return this.takeNext();
  }

  /** Why a partition consumer stopped for good, if one did (a loop, not a closure: per message). */
  private failure(): Error | undefined {
    for (const consumer of this.consumers) {
      const failure = consumer.failed;
      if (failure) return failure;
    }
    return undefined;
  }

  /** The last message id stored on `partition` (0 on a non-partitioned topic). */
  lastMessageId(partition = 0): Promise<MessageId> {
    const consumer = this.consumers[this.partitions === 0 ? 0 : partition];
    if (!consumer)
      return Promise.reject(
        new RustStreamError(
          "invalid-argument",
          `partition ${partition} does not exist on ${this.topic} (${this.partitions} partitions)`,
        ),
      );
    return consumer.lastMessageId();
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0) {
      const failure = this.failure();
      if (this.closed || failure) {
        const error = failure ?? closedError(`consumer ${this.subscription} on ${this.topic}`);
        for (const waiter of this.waiters.drain()) {
          waiter.cancel?.();
          waiter.reject(error);
        }
        return;
      }
      const message = this.takeNext();
      if (!message) return;
      const waiter = this.waiters.shift()!;
      waiter.cancel?.();
      waiter.resolve(message);
    }
  }

  private takeNext(): Message | undefined {
    const n = this.consumers.length;
    for (let i = 0; i < n; i++) {
      const consumer = this.consumers[(this.next + i) % n]!;
      const message = consumer.take();
      if (message) {
        this.next = (this.next + i + 1) % n;
        return message;
      }
    }
    return undefined;
  }

  /** The next message; waits for one (up to `timeoutMs`, then rejects with `timeout`). */
  receive(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Message> {
    if (this.closed)
      return Promise.reject(closedError(`consumer ${this.subscription} on ${this.topic}`));
    const failure = this.failure();
    if (failure) return Promise.reject(failure);
    if (this.waiters.length === 0) {
      const message = this.takeNext();
      if (message) return Promise.resolve(message);
    }
    return new Promise<Message>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      const cleanups: (() => void)[] = [];
      const abandon = (error: Error): void => {
        // Leave the queue; a message for it goes to the next waiter.
        const rest = this.waiters.drain().filter((w) => w !== waiter);
        for (const w of rest) this.waiters.push(w);
        for (const c of cleanups) c();
        reject(error);
      };
      if (options.timeoutMs !== undefined) {
        const timer = setTimeout(
          () =>
            abandon(
              new RustStreamError(
                "timeout",
                `no message on ${this.topic} (${this.subscription}) within ${options.timeoutMs} ms`,
              ),
            ),
          options.timeoutMs,
        );
        cleanups.push(() => clearTimeout(timer));
      }
      if (options.signal) {
        const signal = options.signal;
        const onAbort = (): void =>
          abandon(
            new RustStreamError("closed", `receive on ${this.topic} aborted`, {
              cause: signal.reason,
            }),
          );
        signal.addEventListener("abort", onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener("abort", onAbort));
      }
      waiter.cancel = () => {
        for (const c of cleanups) c();
      };
      this.waiters.push(waiter);
    });
  }

  private originOf(message: Message): ReceivedEntry {
    const entry = entryOf(message);
    if (!entry || !this.consumers.includes(entry.consumer))
      throw new RustStreamError("foreign-value", "this message was not received by this consumer");
    return entry;
  }

  /** Acknowledges one message (sent without waiting for an answer). */
  ack(message: Message): void {
    if (this.closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    this.originOf(message).consumer.ack(message);
  }

  /** Acknowledges this message and everything before it in its partition (Exclusive and Failover only). */
  ackCumulative(message: Message): void {
    if (this.closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    this.originOf(message).consumer.ackCumulative(message);
  }

  /** Asks for the message again (see PartitionConsumer.nack for what each subscription type does). */
  nack(message: Message): void {
    if (this.closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    this.originOf(message).consumer.nack(message);
  }

  /**
   * Moves the subscription: to a message id (on its partition), or to a publish time (ms since the
   * epoch) on every partition.
   */
  async seek(target: MessageId | number): Promise<void> {
    if (this.closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    if (typeof target !== "number" && this.partitions > 0) {
      const consumer = this.consumers[target.partition];
      if (!consumer)
        throw new RustStreamError(
          "invalid-argument",
          `message id ${target} names no partition of ${this.topic}; seek a partitioned topic by time or by an id it gave`,
        );
      await consumer.seek(target);
      return;
    }
    await Promise.all(this.consumers.map((c) => c.seek(target)));
  }

  /** Deletes the subscription on the broker, then closes. */
  async unsubscribe(): Promise<void> {
    if (this.closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    await Promise.all(this.consumers.map((c) => c.unsubscribe()));
    await this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.consumers.map((c) => c.close()));
    this.notify();
  }
}

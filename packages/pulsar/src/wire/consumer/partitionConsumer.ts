// A PartitionConsumer is one SUBSCRIBE on one topic (or one partition): the broker pushes MESSAGE
// frames while the consumer has flow permits, so the consumer grants its receiver queue's size up
// front and grants again, in one FLOW, once half of it has been taken (acks.ts). Entries are
// decoded here into messages (entryDecoding.ts), one permit per message; the ones that cannot be
// decoded go to undecodableEntries.ts. After the broker or the connection drops it, it subscribes
// again (attacher.ts).
import { RustStreamError } from "@ruststream/core";
import { Attacher, type Attachment, type AttachTarget } from "../attacher.js";
import { CommandType, ServerError, SubType } from "../commands/enums.js";
import type { CommandMessage } from "../commands/shapes.js";
import { loadCodecs } from "../compression.js";
import type { Connection, ConsumerHandler } from "../connection.js";
import { closedError, serverFailure } from "../errors.js";
import type { PayloadSection } from "../frame.js";
import type { ClientHost } from "../host.js";
import { MessageId } from "../messageId.js";
import { Queue } from "../queue.js";
import { Acks } from "./acks.js";
import type { ConsumerOptions } from "./consumerOptions.js";
import type { ConsumerStats } from "./consumerStats.js";
import { decodeEntry, type EntrySource } from "./entryDecoding.js";
import { entryOf, type Message, type MessageOwner } from "./message.js";
import { dropQueuedBefore, seekCommand } from "./seek.js";
import { subscribeCommand } from "./subscribeCommand.js";
import { UndecodableEntries } from "./undecodableEntries.js";

/** Where a partition consumer tells its Consumer that messages are queued. */
export interface MessageSink {
  notify(): void;
}

type State = "connecting" | "ready" | "closed" | "failed";

/** A consumer of one topic or one partition. */
export class PartitionConsumer implements ConsumerHandler, MessageOwner {
  #state: State = "connecting";
  #connection: Connection | undefined;
  #consumerId = -1;
  /** The live subscribe, as the entries it brings see it. */
  #source: EntrySource | undefined;
  readonly #queue = new Queue<Message>();
  #epoch = 0n;
  readonly #acks: Acks;
  readonly #undecodable: UndecodableEntries;
  readonly #attacher: Attacher;
  #seekingConsumerId: number | undefined;
  #failure: Error | undefined;
  readonly #readyWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  readonly #subType: number;
  readonly #receiverQueueSize: number;
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

  readonly #host: ClientHost;
  readonly #sink: MessageSink;
  readonly #options: ConsumerOptions;

  constructor(
    host: ClientHost,
    sink: MessageSink,
    readonly topic: string,
    readonly partition: number,
    options: ConsumerOptions,
  ) {
    this.#host = host;
    this.#sink = sink;
    this.#options = options;
    this.#subType = SubType[options.subscriptionType ?? "Exclusive"];
    this.#receiverQueueSize = Math.max(1, options.receiverQueueSize ?? 1000);
    this.#acks = new Acks(
      { connection: () => this.#connection, consumerId: () => this.#consumerId },
      this.#receiverQueueSize,
      options.negativeAckDelayMs ?? 0,
    );
    this.#undecodable = new UndecodableEntries({
      topic,
      partition,
      subscription: options.subscription,
      handler: options.undecodable,
      log: host.log,
      backoff: host.backoff,
      acks: this.#acks,
      redeliver: (ledgerId, entryId) => {
        if (this.#state === "closed" || this.#state === "failed") return;
        this.#redeliver(ledgerId, entryId);
      },
    });
    const target: AttachTarget = {
      topic,
      finished: () => this.#state === "closed" || this.#state === "failed",
      request: (connection) => this.#subscribe(connection),
      fail: (error) => this.#fail(error),
    };
    // After a disconnect the broker may still count the previous consumer for a moment.
    this.#attacher = new Attacher(host, target, ServerError.ConsumerBusy);
  }

  /** True on Shared and Key_Shared, where messages are redelivered one by one and counted. */
  get sharesMessages(): boolean {
    return this.#subType === SubType.Shared || this.#subType === SubType.Key_Shared;
  }

  /** Subscribes for the first time; rejects when the broker refuses or the operation times out. */
  async start(): Promise<void> {
    await loadCodecs();
    await this.#attacher.start();
  }

  async #subscribe(connection: Connection): Promise<Attachment> {
    // A new id per subscribe: a MESSAGE still in flight for an earlier one finds no handler and is
    // dropped, rather than mistaken for one of this subscription's.
    const consumerId = this.#host.newConsumerId();
    const requestId = connection.newRequestId();
    connection.registerConsumer(consumerId, this);
    try {
      await connection.request(
        requestId,
        subscribeCommand(this.#options, {
          topic: this.topic,
          consumerId,
          requestId,
          consumerEpoch: this.#epoch,
        }),
        `subscribe ${this.#options.subscription} on ${this.topic}`,
      );
    } catch (error) {
      connection.unregisterConsumer(consumerId);
      throw error;
    }
    return {
      release: () => connection.unregisterConsumer(consumerId),
      commit: () => this.#subscribed(connection, consumerId),
    };
  }

  #subscribed(connection: Connection, consumerId: number): void {
    this.#consumerId = consumerId;
    this.#connection = connection;
    this.#source = {
      topic: this.topic,
      partition: this.partition,
      owner: this,
      consumerId,
      acks: this.#acks,
      maxMessageSize: connection.maxMessageSize,
    };
    this.connects++;
    // The broker redelivers whatever the previous subscribe had pushed and was not acked, so what
    // is still queued from it would come twice; drop it, and grant the whole queue again.
    this.#queue.drain();
    this.#acks.resetPermits();
    // Acks made while no subscribe was live go out before the FLOW, so the broker applies them
    // before it redelivers: those messages were handled and do not come again.
    this.#acks.flush();
    connection.send({
      type: CommandType.FLOW,
      flow: { consumerId, messagePermits: this.#receiverQueueSize },
    });
    this.#state = "ready";
    for (const waiter of this.#readyWaiters.splice(0)) waiter.resolve();
  }

  onMessage(command: CommandMessage, section: PayloadSection): void {
    const source = this.#source;
    if (this.#state !== "ready" || source === undefined || command.consumerId !== this.#consumerId)
      return;
    const count = section.metadata.numMessagesInBatch ?? 1;
    if (command.consumerEpoch !== undefined && command.consumerEpoch < this.#epoch) {
      // Pushed before a redelivery we asked for: it comes again, with the new epoch.
      this.#acks.returnPermits(count);
      return;
    }
    if (this.#seekingConsumerId === command.consumerId) {
      this.#acks.returnPermits(count);
      return;
    }
    const skipped = decodeEntry(command, section, source, this.#queue);
    if (typeof skipped !== "number") {
      this.discarded++;
      this.#acks.returnPermits(count);
      this.#undecodable.handle(command, section, skipped);
      return;
    }
    if (skipped > 0) this.#acks.returnPermits(skipped);
    if (skipped < count) this.#sink.notify();
  }

  /** How many messages are queued here. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Takes the next queued message, returning its permit. */
  take(): Message | undefined {
    const message = this.#queue.shift();
    if (message) this.#acks.returnPermits(1);
    return message;
  }

  ack(message: Message): void {
    this.#acks.ack(entryOf(message)!, message.batchIndex);
  }

  ackCumulative(message: Message): void {
    if (this.sharesMessages)
      throw new RustStreamError(
        "invalid-argument",
        "cumulative acknowledgement is not allowed on Shared and Key_Shared subscriptions; ack each message",
      );
    this.#acks.ackCumulative(message);
  }

  /**
   * Asks for the message again. Shared and Key_Shared: its entry is redelivered (to any consumer)
   * with the broker's redelivery count one higher. Exclusive and Failover: the broker cannot
   * redeliver single messages there, so it rewinds to the first unacked message and everything
   * unacked comes again; what is queued here is dropped.
   */
  nack(message: Message): void {
    const id = message.messageId;
    this.#redeliver(id.ledgerId, id.entryId);
  }

  /** Asks for an entry again: that one (Shared, Key_Shared), or everything unacked. */
  #redeliver(ledgerId: bigint, entryId: bigint): void {
    if (!this.sharesMessages) {
      this.redeliverAll();
      return;
    }
    this.#acks.nack(ledgerId, entryId);
  }

  /** Asks the broker to redeliver everything this consumer has not acked. */
  redeliverAll(): void {
    // Acks made before the nack must reach the broker before the rewind, or it redelivers them.
    this.#acks.flush();
    // A new epoch marks what the broker pushed before the request as stale when it arrives.
    this.#epoch++;
    const dropped = this.#queue.drain().length;
    if (dropped > 0) this.#acks.returnPermits(dropped);
    this.#connection?.send({
      type: CommandType.REDELIVER_UNACKNOWLEDGED_MESSAGES,
      redeliverUnacknowledgedMessages: { consumerId: this.#consumerId, consumerEpoch: this.#epoch },
    });
  }

  /**
   * Moves the subscription to a message id or a publish time (ms). The broker disconnects the
   * subscription's consumers to move its cursor; this consumer resubscribes, and what was queued or
   * still arrives from before the move is dropped.
   */
  async seek(target: MessageId | number): Promise<void> {
    await this.ready();
    const connection = this.#connection!;
    const consumerId = this.#consumerId;
    this.#acks.flush();
    const requestId = connection.newRequestId();
    this.#seekingConsumerId = consumerId;
    this.#queue.drain();
    try {
      await connection.request(
        requestId,
        seekCommand(consumerId, requestId, target),
        `seek ${this.#options.subscription} on ${this.topic}`,
      );
    } finally {
      this.#seekingConsumerId = undefined;
    }
    if (this.#consumerId === consumerId) dropQueuedBefore(this.#queue, consumerId);
    this.#acks.clearTrackers();
  }

  /**
   * The id of the last message the broker stored on this topic or partition (ledger -1 on one that
   * never held a message): what a seek checks an id against, since the broker itself accepts any.
   */
  async lastMessageId(): Promise<MessageId> {
    await this.ready();
    const connection = this.#connection!;
    const requestId = connection.newRequestId();
    const answer = await connection.request(
      requestId,
      {
        type: CommandType.GET_LAST_MESSAGE_ID,
        getLastMessageId: { consumerId: this.#consumerId, requestId },
      },
      `get the last message id of ${this.topic}`,
    );
    const data = answer.getLastMessageIdResponse!.lastMessageId;
    return MessageId.fromData(data, this.partition);
  }

  /**
   * The broker's counts for this consumer's subscription on this topic or partition, from one
   * CONSUMER_STATS request. Rejects at once while not attached (the connection away, the topic
   * moving), rather than waiting for the next attach: a scrape wants a number now or none.
   */
  async stats(): Promise<ConsumerStats> {
    const what = `the backlog of ${this.#options.subscription} on ${this.topic}`;
    if (this.#state !== "ready") {
      if (this.#state === "closed") throw closedError(`consumer on ${this.topic}`);
      throw new RustStreamError(
        "broker-failure",
        `${what}: the consumer is not attached to the broker (${this.#state}); it is asked again at the next scrape`,
        ...(this.#failure === undefined ? [] : [{ cause: this.#failure }]),
      );
    }
    const connection = this.#connection!;
    const requestId = connection.newRequestId();
    const answer = await connection.request(
      requestId,
      {
        type: CommandType.CONSUMER_STATS,
        consumerStats: { requestId, consumerId: this.#consumerId },
      },
      what,
    );
    const stats = answer.consumerStatsResponse!;
    if (stats.errorCode !== undefined) {
      throw serverFailure(what, stats.errorCode, stats.errorMessage ?? "");
    }
    return { backlog: stats.msgBacklog ?? 0, unacked: stats.unackedMessages ?? 0 };
  }

  /** Resolves once subscribed (at once when it is); rejects when closed or failed. */
  ready(): Promise<void> {
    if (this.#state === "ready") return Promise.resolve();
    if (this.#state === "closed") return Promise.reject(closedError(`consumer on ${this.topic}`));
    if (this.#state === "failed")
      return Promise.reject(this.#failure ?? closedError(`consumer on ${this.topic}`));
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  onActiveConsumerChange(change: { isActive?: boolean }): void {
    this.active = change.isActive ?? false;
  }

  onReachedEndOfTopic(): void {
    this.reachedEndOfTopic = true;
  }

  onClosedByBroker(): void {
    // A topic unloaded or moved: attached again at once, reported only if that fails.
    this.#disconnected(undefined);
  }

  onConnectionClosed(error: Error): void {
    this.#disconnected(error.message);
  }

  /** `reason`: why the connection went, when it was the connection and not the broker's close. */
  #disconnected(reason: string | undefined): void {
    this.#connection = undefined;
    this.#source = undefined;
    // What is queued came through the subscribe that just ended: the broker redelivers it to the
    // next one, so handing it out now would only hand it out twice.
    this.#queue.drain();
    if (this.#state === "ready") this.#state = "connecting";
    this.#attacher.lost(reason);
  }

  #fail(error: Error): void {
    this.#failure = error;
    this.#state = "failed";
    for (const waiter of this.#readyWaiters.splice(0)) waiter.reject(error);
    this.#sink.notify();
  }

  /** Why this consumer stopped for good, if it did. */
  get failed(): Error | undefined {
    return this.#failure;
  }

  async unsubscribe(): Promise<void> {
    await this.ready();
    const connection = this.#connection!;
    const requestId = connection.newRequestId();
    await connection.request(
      requestId,
      { type: CommandType.UNSUBSCRIBE, unsubscribe: { consumerId: this.#consumerId, requestId } },
      `unsubscribe ${this.#options.subscription} from ${this.topic}`,
    );
    await this.close();
  }

  async close(): Promise<void> {
    if (this.#state === "closed") return;
    this.#attacher.close();
    this.#acks.flushAll();
    this.#state = "closed";
    for (const waiter of this.#readyWaiters.splice(0))
      waiter.reject(closedError(`consumer on ${this.topic}`));
    this.#queue.drain();
    const connection = this.#connection;
    this.#connection = undefined;
    this.#source = undefined;
    if (connection && !connection.closed) {
      connection.unregisterConsumer(this.#consumerId);
      const requestId = connection.newRequestId();
      await connection
        .request(
          requestId,
          {
            type: CommandType.CLOSE_CONSUMER,
            closeConsumer: { consumerId: this.#consumerId, requestId },
          },
          `close consumer on ${this.topic}`,
        )
        .catch(() => undefined);
    }
    this.#sink.notify();
  }

  get closed(): boolean {
    return this.#state === "closed";
  }
}

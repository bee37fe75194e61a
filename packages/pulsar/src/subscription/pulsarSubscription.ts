import {
  type BatchSubscription,
  type OutgoingMessage,
  RustStreamError,
  type SeekableSubscription,
} from "@ruststream/core";
import {
  assertBatchSize,
  batchesMark,
  movesMark,
  type ReportsMoves,
  seekMark,
  subscriptionIterator,
} from "@ruststream/core/broker";
import type { PulsarDelivery } from "../delivery/pulsarDelivery.js";
import type { DeadLetterPolicy, SharedOwner } from "../delivery/sharedDelivery.js";
import type { HostedSubscription, PulsarHost } from "../host.js";
import type { LinkConsumer } from "../link/link.js";
import { isPulsarPosition, type PulsarPosition, parsePulsarPosition } from "../position.js";
import type { PulsarPublishOptions } from "../publisher.js";
import type { MessageId } from "../wire/messageId.js";
import type { Reader, Received } from "./reader.js";

const done: IteratorResult<PulsarDelivery, undefined> = { done: true, value: undefined };

/** How a subscription turns what it reads into deliveries: the mode's part. */
export type DeliveryFactory = (owner: SharedOwner, received: Received) => PulsarDelivery;

export interface SubscriptionSettings {
  readonly name: string;
  /** The topic's full name. */
  readonly topic: string;
  readonly subscription: string;
  readonly retryTopic: string | undefined;
  readonly deadLetter: DeadLetterPolicy | undefined;
  readonly deliver: DeliveryFactory;
  /** Gives the reader back: closes it, or lets go of a share of it (Exclusive, see broker.ts). */
  readonly release: () => Promise<void>;
  /** Tells the connection this subscription no longer needs stopping at shutdown. */
  readonly forget: () => void;
}

/**
 * A subscription to a Pulsar topic (and its retry topic): the broker pushes messages under flow
 * permits into the consumers' receiver queues, and `next()` or `nextBatch()` take what is there or
 * wait for it, so a consumer that stops pulling stops granting permits: back-pressure.
 *
 * `close()` stops pulling at once; the consumers stay attached until every delivery handed out is
 * settled, so a handler finishing after the close still acks on the consumer that received it.
 */
export class PulsarSubscription
  implements
    BatchSubscription<PulsarDelivery>,
    SeekableSubscription<PulsarDelivery>,
    ReportsMoves,
    SharedOwner,
    HostedSubscription
{
  readonly [batchesMark] = true as const;
  readonly [seekMark] = true as const;
  readonly [movesMark] = true as const;
  readonly name: string;
  readonly topic: string;
  readonly subscription: string;
  readonly retryTopic: string | undefined;
  readonly deadLetter: DeadLetterPolicy | undefined;
  readonly #host: PulsarHost;
  readonly #reader: Reader;
  readonly #settings: SubscriptionSettings;
  readonly #unlisten: () => void;

  /** The subscription name: Pulsar's consumer group (the messaging conventions' group name). */
  get group(): string {
    return this.subscription;
  }
  /** Handed out and not yet settled: the consumers stay open for them after a close. */
  readonly #out = new Set<PulsarDelivery>();
  #wake: (() => void) | undefined;
  #onMoved: ((moved: PulsarDelivery, destination: string, reason: string) => void) | undefined;
  #taking = false;
  #closed = false;
  #released: Promise<void> | undefined;
  #revoked: RustStreamError | undefined;

  constructor(host: PulsarHost, reader: Reader, settings: SubscriptionSettings) {
    this.#host = host;
    this.#reader = reader;
    this.#settings = settings;
    this.name = settings.name;
    this.topic = settings.topic;
    this.subscription = settings.subscription;
    this.retryTopic = settings.retryTopic;
    this.deadLetter = settings.deadLetter;
    this.#unlisten = reader.listen(() => this.#wakeUp());
  }

  async next(): Promise<IteratorResult<PulsarDelivery, undefined>> {
    const [first] = await this.#take(1);
    return first === undefined ? done : { done: false, value: first };
  }

  async nextBatch(max: number): Promise<readonly PulsarDelivery[]> {
    assertBatchSize(max);
    return this.#take(max);
  }

  /**
   * Moves the whole subscription (every consumer of it, in every process): to a message, on its
   * topic or retry topic and partition, or to a publish time on all of them. The broker accepts any
   * id, so one after the topic's last message is refused here with `unknown-position`.
   */
  async seek(position: PulsarPosition): Promise<void> {
    this.#host.assertOpen();
    if (!isPulsarPosition(position)) {
      throw new RustStreamError(
        "foreign-value",
        "seek() got a position that is not a Pulsar position: pass delivery.position or parsePosition()",
      );
    }
    if (position.kind === "time") {
      await this.#moving(
        Promise.all([
          this.#reader.main.seek(position.publishTime),
          this.#reader.retry?.seek(position.publishTime),
        ]),
      );
      return;
    }
    const consumer = this.#reader.consumer(position.retry);
    if (consumer === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `${position} is a position in the retry topic, which ${this.name} (${this.subscription}) does not read`,
      );
    }
    const id = position.messageId;
    await this.#checkExists(consumer, id, position);
    await this.#moving(consumer.seek(id));
  }

  parsePosition(text: string): PulsarPosition {
    return parsePulsarPosition(text);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#settings.forget();
    this.#wakeUp();
    if (this.#out.size === 0) await this.#release();
  }

  [Symbol.asyncIterator](): AsyncIterator<PulsarDelivery, undefined> {
    return subscriptionIterator(this);
  }

  // HostedSubscription

  async revoke(error: RustStreamError): Promise<void> {
    this.#revoked = error;
    this.#closed = true;
    this.#wakeUp();
    this.#out.clear();
    await this.#release();
  }

  // SharedOwner

  assertOpen(): void {
    this.#host.assertOpen();
  }

  acknowledge(delivery: PulsarDelivery): void {
    this.#reader.consumer(delivery.fromRetryTopic)?.ack(delivery.message);
  }

  redeliver(delivery: PulsarDelivery): void {
    this.#reader.consumer(delivery.fromRetryTopic)?.nack(delivery.message);
  }

  publishCopy(
    message: OutgoingMessage<PulsarPublishOptions>,
    initialSubscription: string,
  ): Promise<void> {
    return this.#host.publishCopy(message, initialSubscription);
  }

  now(): number {
    return this.#host.now();
  }

  settled(delivery: PulsarDelivery): void {
    this.#out.delete(delivery);
    if (this.#closed && this.#out.size === 0) void this.#release();
  }

  // Pulling

  async #take(max: number): Promise<PulsarDelivery[]> {
    this.#host.assertOpen();
    if (this.#closed) return [];
    if (this.#taking) {
      throw new RustStreamError(
        "invalid-argument",
        `a second next() on "${this.name}" while one is waiting: pull one at a time, or open another subscription to consume in parallel`,
      );
    }
    this.#taking = true;
    try {
      for (;;) {
        if (this.#revoked !== undefined) throw this.#revoked;
        if (this.#closed) return [];
        const deliveries: PulsarDelivery[] = [];
        while (deliveries.length < max) {
          const received = this.#reader.tryReceive();
          if (received === undefined) break;
          const delivery = this.#settings.deliver(this, received);
          this.#out.add(delivery);
          if (this.#spent(delivery)) continue;
          deliveries.push(delivery);
        }
        if (deliveries.length > 0) return deliveries;
        // Nothing queued: wait for the consumers to say a message came (or for a close).
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      this.#taking = false;
    }
  }

  /**
   * A message the broker redelivered past the declared cap is moved to the dead letter at once,
   * never handed out: another consumer of the Shared subscription (in another process, a RustStream
   * service among them) asked for a retry at its last attempt. Pulsar's clients (Java's, the Rust
   * `pulsar` crate RustStream's services use) do the same on arrival, so the cap holds across every
   * consumer of the subscription. If the move fails, the broker redelivers it.
   */
  #spent(delivery: PulsarDelivery): boolean {
    const deadLetter = this.deadLetter;
    if (deadLetter === undefined || delivery.attempt <= deadLetter.maxAttempts) return false;
    void Promise.resolve(delivery.nack({ requeue: true })).then(
      () => this.#onMoved?.(delivery, deadLetter.topic, "max-attempts"),
      () => this.redeliver(delivery),
    );
    return true;
  }

  /** The app's runtime counts the messages moved on arrival with its other dead letters. */
  onMoved(listener: (moved: PulsarDelivery, destination: string, reason: string) => void): void {
    this.#onMoved = listener;
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #release(): Promise<void> {
    this.#released ??= (async () => {
      this.#unlisten();
      await this.#settings.release();
    })();
    return this.#released;
  }

  async #moving(work: Promise<unknown>): Promise<void> {
    try {
      await work;
    } catch (error) {
      if (this.#host.isClosed) throw this.#host.closedError("subscription");
      throw error;
    }
  }

  /** Refuses an id after the last message of its topic (or partition): one that never existed. */
  async #checkExists(
    consumer: LinkConsumer,
    id: MessageId,
    position: PulsarPosition,
  ): Promise<void> {
    if (consumer.partitions > 0 && (id.partition < 0 || id.partition >= consumer.partitions)) {
      throw new RustStreamError(
        "unknown-position",
        `${position} names no partition of ${this.name} (${consumer.partitions} partitions): seek to a position a delivery reported`,
      );
    }
    let last: MessageId;
    try {
      last = await consumer.lastMessageId(Math.max(0, id.partition));
    } catch (error) {
      if (this.#host.isClosed) throw this.#host.closedError("subscription");
      throw error;
    }
    const after =
      last.ledgerId < 0n ||
      id.ledgerId > last.ledgerId ||
      (id.ledgerId === last.ledgerId && id.entryId > last.entryId);
    if (after) {
      throw new RustStreamError(
        "unknown-position",
        `${position} is after the last message of ${this.name} (${last.ledgerId < 0n ? "it holds none" : last.entry()}): it was never written; seek to a position a delivery reported`,
      );
    }
  }
}

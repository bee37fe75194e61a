import {
  type BacklogCounts,
  type OutgoingMessage,
  RustStreamError,
  type SeekableSubscription,
} from "@ruststream/core";
import {
  backlogMark,
  type HostedSubscription,
  movesMark,
  PullSubscription,
  type ReportsBacklog,
  type ReportsMoves,
  seekMark,
} from "@ruststream/core/broker";
import type { PulsarDelivery } from "../delivery/pulsarDelivery.js";
import type { DeadLetterPolicy, SharedOwner } from "../delivery/sharedDelivery.js";
import type { PulsarHost } from "../host.js";
import type { LinkConsumer } from "../link/link.js";
import { isPulsarPosition, type PulsarPosition, parsePulsarPosition } from "../position.js";
import type { PulsarPublishOptions } from "../publisher.js";
import { sumStats } from "../wire/consumer/consumerStats.js";
import type { MessageId } from "../wire/messageId.js";
import type { Reader, Received } from "./reader.js";

/** How a subscription turns what it reads into deliveries: the mode's part. */
export type DeliveryFactory = (owner: SharedOwner, received: Received) => PulsarDelivery;

export interface SubscriptionSettings {
  readonly name: string;
  /** The topic's full name. */
  readonly topic: string;
  readonly subscription: string;
  readonly retryTopic: string | undefined;
  readonly deadLetter: DeadLetterPolicy | undefined;
  /**
   * The broker counts what it dispatched to each consumer and not acknowledged (Shared and
   * Key_Shared only): the backlog says `leased`.
   */
  readonly countsLeased: boolean;
  readonly deliver: DeliveryFactory;
  /** Gives the reader back: closes it, or lets go of a share of it (Exclusive, see readers.ts). */
  readonly release: () => Promise<void>;
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
  extends PullSubscription<PulsarDelivery>
  implements
    SeekableSubscription<PulsarDelivery>,
    ReportsMoves,
    ReportsBacklog,
    SharedOwner,
    HostedSubscription
{
  readonly [seekMark] = true as const;
  readonly [backlogMark] = true as const;
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
  #released: Promise<void> | undefined;

  constructor(host: PulsarHost, reader: Reader, settings: SubscriptionSettings) {
    super();
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

  /**
   * Moves the whole subscription (every consumer of it, in every process): to a message, on its
   * topic or retry topic and partition, or to a publish time on all of them. The broker accepts any
   * id, so one after the topic's last message is refused here with `unknown-position`.
   */
  async seek(position: PulsarPosition): Promise<void> {
    this.seekTo(position, isPulsarPosition, "a Pulsar position");
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

  /**
   * The broker's counts from one CONSUMER_STATS request per partition consumer (the topic's, and
   * the retry topic's where it reads one), summed: `ready` the subscription's `msgBacklog` (every
   * entry not acknowledged, those dispatched and held in handlers or receiver queues included,
   * and delayed ones not due yet); `leased`, on Shared and Key_Shared only, this consumer's
   * `unackedMessages` (what the broker dispatched to this process and it has not acknowledged).
   * Rejects at once while a consumer is not attached, and with the broker's answer when it no
   * longer knows the consumer.
   */
  async backlog(): Promise<BacklogCounts> {
    this.assertOpen();
    const retry = this.#reader.retry;
    const stats = sumStats(
      await Promise.all([
        this.#reader.main.stats(),
        ...(retry === undefined ? [] : [retry.stats()]),
      ]),
    );
    return this.#settings.countsLeased
      ? { ready: stats.backlog, leased: stats.unacked }
      : { ready: stats.backlog };
  }

  parsePosition(text: string): PulsarPosition {
    return parsePulsarPosition(text);
  }

  async close(): Promise<void> {
    if (!this.markClosed()) return;
    this.#host.forget(this);
    this.#wakeUp();
    if (this.#out.size === 0) await this.#release();
  }

  // HostedSubscription

  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#wakeUp();
  }

  /** Closes the consumers, which sends their pending acks first; what stays unacked goes back. */
  async surrender(): Promise<number> {
    const open = this.#out.size;
    this.#out.clear();
    await this.#release();
    return open;
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
    if (this.closed && this.#out.size === 0) void this.#release();
  }

  // Pulling

  protected async pull(max: number): Promise<PulsarDelivery[]> {
    for (;;) {
      const revoked = this.revokedWith;
      if (revoked !== undefined) throw revoked;
      if (this.closed) return [];
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

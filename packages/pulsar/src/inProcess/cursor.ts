import type { Clock, ClockTimer } from "@ruststream/core";
import type { Coordinator } from "@ruststream/core/broker";
import { ServerError } from "../wire/commands/enums.js";
import type { InitialPosition, SubscriptionType } from "../wire/consumer/consumerOptions.js";
import type { ConsumerStats } from "../wire/consumer/consumerStats.js";
import { serverFailure } from "../wire/errors.js";
import { keyHash } from "../wire/murmur3.js";
import type { Entry, LogReader, TopicLog } from "./topicLog.js";

/** A consumer attached to a cursor: it holds what was pushed to it until it is taken. */
export interface ServerConsumer {
  readonly type: SubscriptionType;
  /** Messages it may still be pushed: its receiver queue's free places (flow permits). */
  permits: number;
  push(entry: Entry, redeliveryCount: number): void;
  /** Drops what it holds queued, for a rewind or a seek (the broker reconnects it). */
  dropQueued(): void;
}

/** What a cursor needs from the stand-in: time, timers, and the test's coordinator. */
export interface CursorHost {
  readonly clock: Clock;
  now(): number;
  readonly coordinator: Coordinator;
}

const shares = (type: SubscriptionType): boolean => type === "Shared" || type === "Key_Shared";

/**
 * A subscription on one topic, as the broker keeps it: which entries are acknowledged, which are
 * out with which consumer, how often each was redelivered, and the dispatch rules of its type:
 *
 * - Exclusive: one consumer; a second is refused (`ConsumerBusy`).
 * - Failover: the first attached consumer is active and gets everything; the next takes over.
 * - Shared: round robin over consumers with permits; a negative ack redelivers that entry alone,
 *   counted; delayed entries wait for their time.
 * - Key_Shared: as Shared, each key to one consumer (its hash over the attached consumers), a key
 *   kept in order.
 *
 * On Exclusive and Failover a negative ack rewinds: everything the consumer holds unacked comes
 * again, uncounted, and delayed delivery is ignored, as the broker's single-consumer dispatcher
 * does. The broker counts redeliveries in memory while the subscription has consumers; it forgets
 * them when the last one leaves, and so does this.
 *
 * For the test's coordinator it counts an entry while it is available to a consumer: due and not
 * acked, with at least one consumer attached.
 */
export class Cursor implements LogReader {
  readonly name: string;
  readonly durable: boolean;
  readonly #topic: TopicLog;
  readonly #host: CursorHost;
  readonly #start: number;
  readonly #acked = new Set<number>();
  readonly #outstanding = new Map<number, ServerConsumer>();
  readonly #redeliveries = new Map<number, number>();
  readonly #counted = new Set<number>();
  readonly #timers = new Map<number, ClockTimer>();
  #consumers: ServerConsumer[] = [];
  #type: SubscriptionType | undefined;
  /** No entry before this one is open: where each dispatch starts looking. */
  #firstOpen: number;
  #turn = 0;

  constructor(
    topic: TopicLog,
    name: string,
    host: CursorHost,
    start: InitialPosition,
    durable: boolean,
  ) {
    this.#topic = topic;
    this.name = name;
    this.#host = host;
    this.durable = durable;
    this.#start = start === "earliest" ? 0 : topic.entries.length;
    this.#firstOpen = this.#start;
  }

  get consumers(): number {
    return this.#consumers.length;
  }

  attach(consumer: ServerConsumer): void {
    const type = this.#type;
    if (this.#consumers.length > 0 && type !== consumer.type) {
      throw serverFailure(
        `subscribe ${this.name} on ${this.#topic.name}`,
        ServerError.ConsumerBusy,
        `Subscription is of different type. Active subscription type of '${type}' is different than the connecting consumer's type '${consumer.type}'.`,
      );
    }
    if (consumer.type === "Exclusive" && this.#consumers.length > 0) {
      throw serverFailure(
        `subscribe ${this.name} on ${this.#topic.name}`,
        ServerError.ConsumerBusy,
        "Exclusive consumer is already connected",
      );
    }
    this.#type = consumer.type;
    this.#consumers.push(consumer);
    if (this.#consumers.length === 1) {
      for (let i = this.#start; i < this.#topic.entries.length; i++) {
        if (this.#available(i)) this.#count(i);
        else this.#schedule(i);
      }
    }
    this.dispatch();
  }

  detach(consumer: ServerConsumer): void {
    const at = this.#consumers.indexOf(consumer);
    if (at < 0) return;
    this.#consumers.splice(at, 1);
    for (const [index, holder] of [...this.#outstanding]) {
      if (holder === consumer) this.#outstanding.delete(index);
    }
    if (this.#consumers.length === 0) {
      this.#redeliveries.clear();
      for (const index of [...this.#counted]) this.#release(index);
      for (const timer of this.#timers.values()) timer.cancel();
      this.#timers.clear();
      if (!this.durable) this.#topic.cursors.delete(this.name);
      return;
    }
    this.dispatch();
  }

  added(entry: Entry): void {
    if (entry.index < this.#start) return;
    if (!this.#topic.persistent && this.#consumers.length === 0) {
      // Nobody listening: a non-persistent topic drops it for this subscription.
      this.#acked.add(entry.index);
      return;
    }
    if (this.#consumers.length === 0) return;
    if (this.#available(entry.index)) this.#count(entry.index);
    else this.#schedule(entry.index);
    this.dispatch();
  }

  ack(index: number): void {
    if (index < this.#start || this.#acked.has(index)) return;
    this.#acked.add(index);
    this.#outstanding.delete(index);
    this.#redeliveries.delete(index);
    this.#release(index);
    while (this.#acked.has(this.#firstOpen)) this.#firstOpen++;
  }

  nack(index: number, consumer: ServerConsumer): void {
    if (!shares(consumer.type)) {
      this.rewind(consumer);
      return;
    }
    if (this.#outstanding.get(index) !== consumer) return;
    this.#outstanding.delete(index);
    this.#redeliveries.set(index, (this.#redeliveries.get(index) ?? 0) + 1);
    this.dispatch();
  }

  /** Everything `consumer` holds unacked goes back, its queue dropped: the single-consumer rewind. */
  rewind(consumer: ServerConsumer): void {
    consumer.dropQueued();
    for (const [index, holder] of [...this.#outstanding]) {
      if (holder === consumer) this.#outstanding.delete(index);
    }
    this.dispatch();
  }

  /** Moves the cursor: entries before `index` count as acknowledged, the rest as never read. */
  seek(index: number): void {
    for (const consumer of this.#consumers) consumer.dropQueued();
    this.#outstanding.clear();
    this.#redeliveries.clear();
    for (let i = this.#start; i < this.#topic.entries.length; i++) {
      if (i < index) this.ack(i);
      else if (this.#acked.delete(i) && this.#consumers.length > 0) {
        if (this.#available(i)) this.#count(i);
        else this.#schedule(i);
      }
    }
    this.#firstOpen = Math.max(this.#start, Math.min(this.#firstOpen, index));
    while (this.#acked.has(this.#firstOpen)) this.#firstOpen++;
    this.dispatch();
  }

  /**
   * The broker's CONSUMER_STATS counts for `consumer`: the entries not acknowledged from the
   * subscription's start (dispatched, delayed or not yet read alike), and, on Shared and
   * Key_Shared only, the entries out with this consumer (pushed to it, its queue included).
   */
  stats(consumer: ServerConsumer): ConsumerStats {
    let backlog = 0;
    for (let i = this.#firstOpen; i < this.#topic.entries.length; i++) {
      if (!this.#acked.has(i)) backlog++;
    }
    let unacked = 0;
    if (shares(consumer.type)) {
      for (const holder of this.#outstanding.values()) if (holder === consumer) unacked++;
    }
    return { backlog, unacked };
  }

  /** Pushes what is available to consumers with permits, by the rules of the type. */
  dispatch(): void {
    const entries = this.#topic.entries;
    const type = this.#type;
    if (this.#consumers.length === 0 || type === undefined) return;
    const blocked = new Set<string>();
    for (let i = this.#firstOpen; i < entries.length; i++) {
      if (this.#acked.has(i) || this.#outstanding.has(i) || !this.#due(i)) continue;
      const entry = entries[i]!;
      const consumer = this.#choose(type, entry, blocked);
      if (consumer === null) return;
      if (consumer === undefined) continue;
      consumer.permits--;
      this.#outstanding.set(i, consumer);
      consumer.push(entry, this.#redeliveries.get(i) ?? 0);
    }
  }

  /** The consumer for `entry`; `undefined` to pass it over for now, `null` to stop dispatching. */
  #choose(
    type: SubscriptionType,
    entry: Entry,
    blocked: Set<string>,
  ): ServerConsumer | undefined | null {
    const consumers = this.#consumers;
    if (type === "Exclusive" || type === "Failover") {
      const active = consumers[0]!;
      return active.permits > 0 ? active : null;
    }
    if (type === "Shared") {
      for (let i = 0; i < consumers.length; i++) {
        const consumer = consumers[(this.#turn + i) % consumers.length]!;
        if (consumer.permits > 0) {
          this.#turn = (this.#turn + i + 1) % consumers.length;
          return consumer;
        }
      }
      return null;
    }
    const message = entry.message;
    const key =
      message.orderingKey !== undefined
        ? Buffer.from(message.orderingKey).toString("latin1")
        : (message.key ?? "");
    if (blocked.has(key)) return undefined;
    const consumer = consumers[keyHash(key, "Murmur3_32Hash") % consumers.length]!;
    if (consumer.permits > 0) return consumer;
    // This key waits, so its later entries must not overtake it; other keys go on.
    blocked.add(key);
    return undefined;
  }

  #due(index: number): boolean {
    const at = this.#topic.entries[index]!.message.deliverAt;
    return at === undefined || !shares(this.#type ?? "Exclusive") || at <= this.#host.now();
  }

  #available(index: number): boolean {
    return index >= this.#start && !this.#acked.has(index) && this.#due(index);
  }

  #schedule(index: number): void {
    if (this.#timers.has(index) || this.#acked.has(index)) return;
    const at = this.#topic.entries[index]!.message.deliverAt;
    if (at === undefined) return;
    this.#timers.set(
      index,
      this.#host.clock.setTimer(Math.max(1, at - this.#host.now()), () => {
        this.#timers.delete(index);
        if (this.#consumers.length === 0 || this.#acked.has(index)) return;
        // A real clock's timer may fire a millisecond before the time it was set for: wait on.
        if (!this.#due(index)) {
          this.#schedule(index);
          return;
        }
        this.#count(index);
        this.dispatch();
      }),
    );
  }

  #count(index: number): void {
    if (this.#counted.has(index)) return;
    this.#counted.add(index);
    this.#host.coordinator.enqueued();
  }

  #release(index: number): void {
    if (this.#counted.delete(index)) this.#host.coordinator.consumed();
  }
}

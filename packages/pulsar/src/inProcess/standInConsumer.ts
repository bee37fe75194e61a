import type { LinkConsumer, LinkMessage } from "../link/link.js";
import type { SubscriptionType } from "../wire/consumer/consumerOptions.js";
import { type ConsumerStats, sumStats } from "../wire/consumer/consumerStats.js";
import { closedError } from "../wire/errors.js";
import type { MessageId } from "../wire/messageId.js";
import type { Cursor, ServerConsumer } from "./cursor.js";
import type { Entry, TopicLog } from "./topicLog.js";

/** One partition's consumer: attached to that partition's cursor, holding what it was pushed. */
class PartConsumer implements ServerConsumer {
  readonly type: SubscriptionType;
  readonly cursor: Cursor;
  readonly topic: TopicLog;
  permits: number;
  readonly queue: LinkMessage[] = [];
  readonly #onPush: () => void;

  constructor(
    type: SubscriptionType,
    cursor: Cursor,
    topic: TopicLog,
    permits: number,
    onPush: () => void,
  ) {
    this.type = type;
    this.cursor = cursor;
    this.topic = topic;
    this.permits = permits;
    this.#onPush = onPush;
  }

  push(entry: Entry, redeliveryCount: number): void {
    const m = entry.message;
    const properties =
      m.properties instanceof Map ? m.properties : new Map(Object.entries(m.properties ?? {}));
    this.queue.push({
      topic: entry.topic,
      messageId: entry.id,
      payload: m.payload,
      properties,
      publishTime: entry.publishTime,
      redeliveryCount,
      key: m.key,
      orderingKey: m.orderingKey,
      eventTime: m.eventTime,
      partition: entry.partition,
    });
    this.#onPush();
  }

  dropQueued(): void {
    this.permits += this.queue.length;
    this.queue.length = 0;
  }
}

/**
 * The stand-in's consumer, behind the same interface as the wire client's: one part per partition,
 * taken round robin, each granting its place back to its cursor as a message is taken (a flow
 * permit), so the cursor pushes no more than the receiver queue holds.
 */
export class StandInConsumer implements LinkConsumer {
  readonly partitions: number;
  readonly #parts: PartConsumer[];
  readonly #listeners = new Set<() => void>();
  readonly #onClose: (consumer: StandInConsumer) => void;
  #turn = 0;
  #closed = false;

  constructor(
    partitions: number,
    topics: readonly TopicLog[],
    cursors: readonly Cursor[],
    type: SubscriptionType,
    receiverQueueSize: number,
    onClose: (consumer: StandInConsumer) => void,
  ) {
    this.partitions = partitions;
    this.#onClose = onClose;
    this.#parts = topics.map(
      (topic, i) =>
        new PartConsumer(type, cursors[i]!, topic, receiverQueueSize, () => this.#notify()),
    );
    const attached: PartConsumer[] = [];
    try {
      for (const part of this.#parts) {
        part.cursor.attach(part);
        attached.push(part);
      }
    } catch (error) {
      for (const part of attached) part.cursor.detach(part);
      throw error;
    }
  }

  tryReceive(): LinkMessage | undefined {
    if (this.#closed) throw closedError("the consumer");
    const n = this.#parts.length;
    for (let i = 0; i < n; i++) {
      const part = this.#parts[(this.#turn + i) % n]!;
      const message = part.queue.shift();
      if (message !== undefined) {
        this.#turn = (this.#turn + i + 1) % n;
        part.permits++;
        part.cursor.dispatch();
        return message;
      }
    }
    return undefined;
  }

  listen(onReadable: () => void): () => void {
    this.#listeners.add(onReadable);
    return () => this.#listeners.delete(onReadable);
  }

  ack(message: LinkMessage): void {
    if (this.#closed) throw closedError("the consumer");
    this.#part(message).cursor.ack(Number(message.messageId.entryId));
  }

  nack(message: LinkMessage): void {
    if (this.#closed) throw closedError("the consumer");
    const part = this.#part(message);
    part.cursor.nack(Number(message.messageId.entryId), part);
  }

  async seek(target: MessageId | number): Promise<void> {
    if (this.#closed) throw closedError("the consumer");
    if (typeof target === "number") {
      for (const part of this.#parts) part.cursor.seek(part.topic.indexAt(target));
      return;
    }
    const part = this.#parts[Math.max(0, target.partition)] ?? this.#parts[0]!;
    part.cursor.seek(part.topic.indexOf(target));
  }

  async lastMessageId(partition: number): Promise<MessageId> {
    if (this.#closed) throw closedError("the consumer");
    return (this.#parts[partition] ?? this.#parts[0]!).topic.lastId();
  }

  async stats(): Promise<ConsumerStats> {
    if (this.#closed) throw closedError("the consumer");
    return sumStats(this.#parts.map((part) => part.cursor.stats(part)));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const part of this.#parts) {
      part.queue.length = 0;
      part.cursor.detach(part);
    }
    this.#onClose(this);
    this.#notify();
  }

  #part(message: LinkMessage): PartConsumer {
    return this.#parts[Math.max(0, message.partition)] ?? this.#parts[0]!;
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

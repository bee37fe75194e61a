// A Consumer reads a topic, partitioned or not, through one partition consumer per partition: it
// fans their messages in (taking from each in turn), hands them to receive() and tryReceive(), and
// routes each ack and nack back to the partition consumer the message came through.
import { RustStreamError } from "@ruststream/core";
import { closedError } from "../errors.js";
import type { ClientHost } from "../host.js";
import type { MessageId } from "../messageId.js";
import { Queue } from "../queue.js";
import { parseTopicName, partitionTopicName } from "../topicName.js";
import type { ConsumerOptions } from "./consumerOptions.js";
import { type ConsumerStats, sumStats } from "./consumerStats.js";
import { entryOf, type Message, type MessageOwner, type ReceivedEntry } from "./message.js";
import { type MessageSink, PartitionConsumer } from "./partitionConsumer.js";

interface Waiter {
  readonly resolve: (message: Message) => void;
  readonly reject: (error: Error) => void;
  cancel?: () => void;
}

/** A consumer on a topic, partitioned or not: one subscription, messages from every partition. */
export class Consumer implements MessageSink {
  readonly #waiters = new Queue<Waiter>();
  readonly #listeners = new Set<() => void>();
  #next = 0;
  #closed = false;
  #consumers: PartitionConsumer[] = [];

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
    consumer.#consumers =
      partitions === 0
        ? [new PartitionConsumer(host, consumer, name.full, name.partition, options)]
        : Array.from(
            { length: partitions },
            (_, i) =>
              new PartitionConsumer(host, consumer, partitionTopicName(name, i), i, options),
          );
    const started = await Promise.allSettled(consumer.#consumers.map((c) => c.start()));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) {
      await Promise.all(consumer.#consumers.map((c) => c.close()));
      throw failed.reason;
    }
    return consumer;
  }

  /** The consumer of each partition (one for a non-partitioned topic). */
  get partitionConsumers(): readonly PartitionConsumer[] {
    return this.#consumers;
  }

  /** Messages received and not yet taken. */
  get queued(): number {
    return this.#consumers.reduce((n, c) => n + c.queued, 0);
  }

  notify(): void {
    this.#serveWaiters();
    // After the waiters: a listener pulls with tryReceive, and a waiter asked first.
    for (const listener of this.#listeners) listener();
  }

  /**
   * Calls `onReadable` whenever a message may be waiting, or the consumer closed or failed: for a
   * reader that pulls with {@link Consumer.tryReceive} from several consumers at once. Returns the
   * call that stops it.
   */
  listen(onReadable: () => void): () => void {
    this.#listeners.add(onReadable);
    return () => this.#listeners.delete(onReadable);
  }

  /**
   * The next queued message without waiting, or `undefined`; throws when the consumer is closed or
   * one of its partitions failed for good.
   */
  tryReceive(): Message | undefined {
    if (this.#closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    const failure = this.#failure();
    if (failure) throw failure;
    if (this.#waiters.length > 0) return undefined;
    return this.#takeNext();
  }

  /** Why a partition consumer stopped for good, if one did (a loop, not a closure: per message). */
  #failure(): Error | undefined {
    for (const consumer of this.#consumers) {
      const failure = consumer.failed;
      if (failure) return failure;
    }
    return undefined;
  }

  /**
   * The broker's counts for the subscription, summed over its partitions: one CONSUMER_STATS
   * request per partition consumer, sent together. Rejects if any partition cannot answer.
   */
  async stats(): Promise<ConsumerStats> {
    if (this.#closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    const parts = await Promise.all(this.#consumers.map((c) => c.stats()));
    return sumStats(parts);
  }

  /** The last message id stored on `partition` (0 on a non-partitioned topic). */
  lastMessageId(partition = 0): Promise<MessageId> {
    const consumer = this.#consumers[this.partitions === 0 ? 0 : partition];
    if (!consumer)
      return Promise.reject(
        new RustStreamError(
          "invalid-argument",
          `partition ${partition} does not exist on ${this.topic} (${this.partitions} partitions)`,
        ),
      );
    return consumer.lastMessageId();
  }

  #serveWaiters(): void {
    while (this.#waiters.length > 0) {
      const failure = this.#failure();
      if (this.#closed || failure) {
        const error = failure ?? closedError(`consumer ${this.subscription} on ${this.topic}`);
        for (const waiter of this.#waiters.drain()) {
          waiter.cancel?.();
          waiter.reject(error);
        }
        return;
      }
      const message = this.#takeNext();
      if (!message) return;
      const waiter = this.#waiters.shift()!;
      waiter.cancel?.();
      waiter.resolve(message);
    }
  }

  #takeNext(): Message | undefined {
    const n = this.#consumers.length;
    for (let i = 0; i < n; i++) {
      const consumer = this.#consumers[(this.#next + i) % n]!;
      const message = consumer.take();
      if (message) {
        this.#next = (this.#next + i + 1) % n;
        return message;
      }
    }
    return undefined;
  }

  /** The next message; waits for one (up to `timeoutMs`, then rejects with `timeout`). */
  receive(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Message> {
    if (this.#closed)
      return Promise.reject(closedError(`consumer ${this.subscription} on ${this.topic}`));
    const failure = this.#failure();
    if (failure) return Promise.reject(failure);
    if (this.#waiters.length === 0) {
      const message = this.#takeNext();
      if (message) return Promise.resolve(message);
    }
    return new Promise<Message>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      const cleanups: (() => void)[] = [];
      const abandon = (error: Error): void => {
        // Leave the queue; a message for it goes to the next waiter.
        const rest = this.#waiters.drain().filter((w) => w !== waiter);
        for (const w of rest) this.#waiters.push(w);
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
      this.#waiters.push(waiter);
    });
  }

  #originOf(message: Message): ReceivedEntry {
    const entry = entryOf(message);
    if (!entry || !(this.#consumers as readonly MessageOwner[]).includes(entry.consumer))
      throw new RustStreamError("foreign-value", "this message was not received by this consumer");
    return entry;
  }

  /** Acknowledges one message (sent without waiting for an answer). */
  ack(message: Message): void {
    if (this.#closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    this.#originOf(message).consumer.ack(message);
  }

  /** Acknowledges this message and everything before it in its partition (Exclusive and Failover only). */
  ackCumulative(message: Message): void {
    if (this.#closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    this.#originOf(message).consumer.ackCumulative(message);
  }

  /** Asks for the message again (see PartitionConsumer.nack for what each subscription type does). */
  nack(message: Message): void {
    if (this.#closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    this.#originOf(message).consumer.nack(message);
  }

  /**
   * Moves the subscription: to a message id (on its partition), or to a publish time (ms since the
   * epoch) on every partition.
   */
  async seek(target: MessageId | number): Promise<void> {
    if (this.#closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    if (typeof target !== "number" && this.partitions > 0) {
      const consumer = this.#consumers[target.partition];
      if (!consumer)
        throw new RustStreamError(
          "invalid-argument",
          `message id ${target} names no partition of ${this.topic}; seek a partitioned topic by time or by an id it gave`,
        );
      await consumer.seek(target);
      return;
    }
    await Promise.all(this.#consumers.map((c) => c.seek(target)));
  }

  /** Deletes the subscription on the broker, then closes. */
  async unsubscribe(): Promise<void> {
    if (this.#closed) throw closedError(`consumer ${this.subscription} on ${this.topic}`);
    await Promise.all(this.#consumers.map((c) => c.unsubscribe()));
    await this.close();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#consumers.map((c) => c.close()));
    this.notify();
  }
}

import type { Clock } from "@ruststream/core";
import { RustStreamError } from "@ruststream/core";
import { type Coordinator, noCoordinator } from "@ruststream/core/broker";
import type { Link, LinkConsumer, LinkProducer } from "../link/link.js";
import type { ConsumerOptions, InitialPosition } from "../wire/consumer/consumerOptions.js";
import { DEFAULT_MAX_MESSAGE_SIZE } from "../wire/frame.js";
import type { MessageId } from "../wire/messageId.js";
import { partitionForKey } from "../wire/murmur3.js";
import type {
  ProducerOptions,
  OutgoingMessage as WireMessage,
} from "../wire/producer/producerOptions.js";
import { parseTopicName, partitionTopicName } from "../wire/topicName.js";
import { Cursor, type CursorHost } from "./cursor.js";
import { StandInConsumer } from "./standInConsumer.js";
import { TopicLog } from "./topicLog.js";

/** What the in-process stand-in needs to be told that a real broker's cluster already knows. */
export interface InProcessSettings {
  /** Topics created partitioned (through Pulsar's admin API in production), by name: partitions. */
  readonly partitionedTopics?: Readonly<Record<string, number>>;
  /** The broker's `maxMessageSize` (default 5 MiB, Pulsar's default). */
  readonly maxMessageSize?: number;
}

/**
 * The in-process stand-in of a Pulsar broker: topics (partitioned where the settings say), their
 * subscriptions with the dispatch rules of each type, delayed delivery on the test's clock, the
 * broker's size limit, and the test's coordinator counting what each subscription holds. It lives
 * in the broker object, so a second connection sees what the first left.
 */
export class InProcessPulsar implements CursorHost {
  readonly maxMessageSize: number;
  readonly #topics = new Map<string, TopicLog>();
  readonly #partitioned = new Map<string, number>();
  #clock: Clock | undefined;
  #coordinator: Coordinator = noCoordinator;
  /** Wall time at the clock's zero: publish times and delivery times are wall clock. */
  #epoch = Date.now();
  #roundRobin = 0;

  constructor(settings: InProcessSettings) {
    this.maxMessageSize = settings.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE;
    for (const [name, partitions] of Object.entries(settings.partitionedTopics ?? {})) {
      this.#partitioned.set(parseTopicName(name).full, partitions);
    }
  }

  /** A test's clock and coordinator: every later timer and count goes to them. */
  attach(clock: Clock, coordinator: Coordinator): void {
    const wall = this.#clock === undefined ? Date.now() : this.now();
    this.#clock = clock;
    this.#coordinator = coordinator;
    this.#epoch = wall - clock.now();
  }

  get clock(): Clock {
    if (this.#clock === undefined) throw new Error("the in-process stand-in has no clock yet");
    return this.#clock;
  }

  get coordinator(): Coordinator {
    return this.#coordinator;
  }

  now(): number {
    return Math.floor(this.#epoch + (this.#clock?.now() ?? 0));
  }

  /** A connection: what it opens is closed with it. */
  link(): Link {
    const consumers = new Set<StandInConsumer>();
    let open = true;
    const refuseClosed = (): void => {
      if (!open) throw new RustStreamError("closed", "the in-process connection is closed");
    };
    return {
      subscribe: async (options) => {
        refuseClosed();
        const consumer = this.#subscribe(options, (c) => consumers.delete(c));
        consumers.add(consumer);
        return consumer;
      },
      createProducer: async (options) => {
        refuseClosed();
        return this.#producer(options, refuseClosed);
      },
      close: async () => {
        open = false;
        await Promise.all([...consumers].map((c) => c.close()));
      },
      publishNow: (topic, message) => {
        refuseClosed();
        this.publish(topic, message);
      },
    };
  }

  /** Stores a message, routed over partitions as the client routes it; refuses what the broker would. */
  publish(topic: string, message: WireMessage): MessageId {
    if (message.payload.length > this.maxMessageSize) {
      throw new RustStreamError(
        "publish-refused",
        `a message of ${message.payload.length} bytes exceeds the broker's max_message_size of ${this.maxMessageSize} bytes on ${topic}; it was not sent (the broker would drop the connection)`,
      );
    }
    const name = parseTopicName(topic);
    const partitions = name.partition >= 0 ? 0 : (this.#partitioned.get(name.full) ?? 0);
    let target = name.full;
    if (partitions > 0) {
      let index: number;
      if (message.partition !== undefined) {
        if (message.partition >= partitions) {
          throw new RustStreamError(
            "invalid-argument",
            `partition ${message.partition} does not exist on ${name.full} (${partitions} partitions)`,
          );
        }
        index = message.partition;
      } else if (message.key !== undefined) {
        index = partitionForKey(message.key, partitions, "JavaStringHash");
      } else {
        this.#roundRobin = (this.#roundRobin + 1) % partitions;
        index = this.#roundRobin;
      }
      target = partitionTopicName(name, index);
    }
    return this.#topic(target).append(message, this.now()).id;
  }

  #topic(full: string): TopicLog {
    let topic = this.#topics.get(full);
    if (topic === undefined) {
      topic = new TopicLog(full, parseTopicName(full).partition);
      this.#topics.set(full, topic);
    }
    return topic;
  }

  /** The logs of a topic: one per partition, or itself. */
  #logs(topic: string): { partitions: number; logs: TopicLog[] } {
    const name = parseTopicName(topic);
    const partitions = name.partition >= 0 ? 0 : (this.#partitioned.get(name.full) ?? 0);
    const logs =
      partitions === 0
        ? [this.#topic(name.full)]
        : Array.from({ length: partitions }, (_, i) => this.#topic(partitionTopicName(name, i)));
    return { partitions, logs };
  }

  #cursor(log: TopicLog, name: string, start: InitialPosition, durable: boolean): Cursor {
    const known = log.cursors.get(name);
    if (known instanceof Cursor) return known;
    const cursor = new Cursor(log, name, this, start, durable && log.persistent);
    log.cursors.set(name, cursor);
    return cursor;
  }

  #subscribe(
    options: ConsumerOptions,
    onClose: (consumer: StandInConsumer) => void,
  ): LinkConsumer & StandInConsumer {
    const { partitions, logs } = this.#logs(options.topic);
    const cursors = logs.map((log) =>
      this.#cursor(
        log,
        options.subscription,
        options.initialPosition ?? "latest",
        options.durable ?? true,
      ),
    );
    return new StandInConsumer(
      partitions,
      logs,
      cursors,
      options.subscriptionType ?? "Exclusive",
      options.receiverQueueSize ?? 1000,
      onClose,
    );
  }

  #producer(options: ProducerOptions, refuseClosed: () => void): LinkProducer {
    const { logs } = this.#logs(options.topic);
    const initial = options.initialSubscriptionName;
    if (initial !== undefined) {
      for (const log of logs) this.#cursor(log, initial, "earliest", true);
    }
    let closed = false;
    return {
      send: async (message) => {
        refuseClosed();
        if (closed) throw new RustStreamError("closed", `producer on ${options.topic} is closed`);
        return this.publish(options.topic, message);
      },
      flush: async () => {},
      close: async () => {
        closed = true;
      },
    };
  }
}

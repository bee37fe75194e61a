import {
  type AddressedSource,
  type Bindings,
  type BrokerMovesSource,
  type RetryDeclaration,
  RustStreamError,
} from "@ruststream/core";
import { positive, sourceMark } from "@ruststream/core/broker";
import { deadLetterTopic, retryTopic } from "./names.js";
import type { InitialPosition, SubscriptionType } from "./wire/consumer/consumerOptions.js";
import { parseTopicName } from "./wire/topicName.js";

export interface PulsarTopicOptions {
  /**
   * The subscription: a durable cursor on the broker that every replica of the service shares. On
   * Shared and Key_Shared it may be left out: the broker's `subscription` option, else the name of
   * the app that connects, fills it in. Exclusive and Failover need it here, since their retry
   * topic is named after it.
   */
  readonly subscription?: string;
  /** Where a subscription this descriptor creates starts (default `"latest"`: later messages only). */
  readonly initialPosition?: InitialPosition;
  /** Messages the broker may push ahead per partition, under flow permits (default 1000). */
  readonly receiverQueueSize?: number;
  /** The consumer's name in the topic's stats (default: the broker assigns one). */
  readonly consumerName?: string;
  /**
   * The topic is partitioned: deliveries report their partition index and keyed lanes by
   * `"partition"` are accepted. Subscribing refuses a topic that turns out not to be.
   */
  readonly partitioned?: boolean;
  /**
   * Whether the subscription also reads its retry topic, `<topic>-<subscription>-RETRY` (default
   * true). Shared and Key_Shared park `nackAfter` copies there; Exclusive and Failover send requeued
   * copies there. `false` makes those verbs answer `unsupported`.
   */
  readonly retryTopic?: boolean;
}

export interface PulsarSharedOptions extends PulsarTopicOptions {
  /**
   * The cap and dead letter applied to this subscription (both or neither). The runtime declares
   * them from `maxAttempts` and `deadLetter` at the mount; a requeue past the cap, and a drop,
   * then move the message to the dead-letter topic.
   */
  readonly retry?: RetryDeclaration;
  /**
   * The subscription a dead-letter topic is created with, so nothing moved there is lost before a
   * reader comes (default: this descriptor's subscription).
   */
  readonly deadLetterSubscription?: string;
}

export interface PulsarKeySharedOptions extends PulsarSharedOptions {
  /** Let the broker deliver a key's messages out of order while consumers change (default false). */
  readonly allowOutOfOrderDelivery?: boolean;
}

export interface PulsarExclusiveOptions extends PulsarTopicOptions {
  readonly subscription: string;
}

function nonEmpty(what: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0) {
    throw new RustStreamError("invalid-argument", `${what} cannot be empty: give it a name`);
  }
  return value;
}

/** What every Pulsar descriptor holds: a topic, a subscription and how it is read. */
abstract class PulsarTopicBase {
  readonly [sourceMark] = "pulsar";
  readonly name: string;
  /** The full topic name (`persistent://public/default/orders` for `orders`). */
  readonly topic: string;
  readonly subscription: string | undefined;
  readonly initialPosition: InitialPosition;
  readonly receiverQueueSize: number;
  readonly consumerName: string | undefined;
  declare readonly partitions?: true;
  readonly readsRetryTopic: boolean;
  abstract readonly subscriptionType: SubscriptionType;

  constructor(topic: string, options: PulsarTopicOptions) {
    this.topic = parseTopicName(topic).full;
    if (parseTopicName(topic).partition >= 0) {
      throw new RustStreamError(
        "invalid-argument",
        `${topic} names one partition: subscribe to the partitioned topic itself (deliveries report their partition)`,
      );
    }
    this.name = topic;
    this.subscription = nonEmpty("a Pulsar subscription", options.subscription);
    this.initialPosition = options.initialPosition ?? "latest";
    if (this.initialPosition !== "latest" && this.initialPosition !== "earliest") {
      throw new RustStreamError(
        "invalid-argument",
        `initialPosition: ${String(options.initialPosition)}; give "latest" or "earliest"`,
      );
    }
    this.receiverQueueSize = positive("receiverQueueSize", options.receiverQueueSize, 1000);
    this.consumerName = nonEmpty("consumerName", options.consumerName);
    if (options.partitioned === true) this.partitions = true;
    this.readsRetryTopic = options.retryTopic ?? true;
    if (this.subscription !== undefined) retryTopic(this.topic, this.subscription);
  }

  /** `<topic>-<subscription>-RETRY`, in full, once the subscription is known. */
  get retryTopic(): string {
    return retryTopic(this.topic, this.#named());
  }

  /** `<topic>-<subscription>-DLQ`, in full: Pulsar's conventional dead-letter topic for it. */
  get deadLetterTopic(): string {
    return deadLetterTopic(this.topic, this.#named());
  }

  get bindings(): Bindings {
    return {
      pulsar: {
        subscriptionType: this.subscriptionType,
        ...(this.subscription === undefined ? {} : { subscription: this.subscription }),
      },
    };
  }

  protected baseOptions(): PulsarTopicOptions {
    return {
      ...(this.subscription === undefined ? {} : { subscription: this.subscription }),
      initialPosition: this.initialPosition,
      receiverQueueSize: this.receiverQueueSize,
      ...(this.consumerName === undefined ? {} : { consumerName: this.consumerName }),
      ...(this.partitions === true ? { partitioned: true } : {}),
      retryTopic: this.readsRetryTopic,
    };
  }

  #named(): string {
    if (this.subscription === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `${this.name} has no subscription yet: name one on the descriptor ({ subscription })`,
      );
    }
    return this.subscription;
  }
}

function checkedRetry(
  topic: string,
  retry: RetryDeclaration | undefined,
): RetryDeclaration | undefined {
  if (retry === undefined) return undefined;
  if ((retry.maxAttempts === undefined) !== (retry.deadLetter === undefined)) {
    throw new RustStreamError(
      "invalid-argument",
      `the retry declared on ${topic} has only ${retry.maxAttempts === undefined ? "deadLetter" : "maxAttempts"}: declare both maxAttempts and deadLetter, or neither`,
    );
  }
  if (retry.maxAttempts === undefined) return undefined;
  positive("maxAttempts", retry.maxAttempts, 1);
  parseTopicName(retry.deadLetter!);
  return { maxAttempts: retry.maxAttempts, deadLetter: retry.deadLetter! };
}

/**
 * What Shared and Key_Shared have in common: the broker redelivers a requeued message (a negative
 * acknowledgement) and counts it, so retries are the broker's; a declared cap and dead letter are
 * applied by this client on that count.
 */
abstract class PulsarSharedBase extends PulsarTopicBase implements BrokerMovesSource {
  readonly copies = "broker" as const;
  readonly retry: RetryDeclaration | undefined;
  readonly deadLetterSubscription: string | undefined;

  constructor(topic: string, options: PulsarSharedOptions) {
    super(topic, options);
    this.retry = checkedRetry(topic, options.retry);
    this.deadLetterSubscription = nonEmpty(
      "deadLetterSubscription",
      options.deadLetterSubscription,
    );
  }

  abstract declareRetry(declaration: RetryDeclaration): PulsarSharedBase;
  /** The same descriptor with the subscription set: what a bare name becomes. */
  abstract withSubscription(subscription: string): PulsarSharedBase;

  protected sharedOptions(): PulsarSharedOptions {
    return {
      ...this.baseOptions(),
      ...(this.retry === undefined ? {} : { retry: this.retry }),
      ...(this.deadLetterSubscription === undefined
        ? {}
        : { deadLetterSubscription: this.deadLetterSubscription }),
    };
  }
}

/**
 * A Shared subscription: competing consumers, each message to one of them; a negative ack brings
 * the message back (to any consumer) with the broker's redelivery count one higher.
 */
export class PulsarShared extends PulsarSharedBase {
  readonly subscriptionType = "Shared" as const;

  constructor(topic: string, options: PulsarSharedOptions = {}) {
    super(topic, options);
  }

  declareRetry(declaration: RetryDeclaration): PulsarShared {
    return new PulsarShared(this.name, { ...this.sharedOptions(), retry: declaration });
  }

  withSubscription(subscription: string): PulsarShared {
    return new PulsarShared(this.name, { ...this.sharedOptions(), subscription });
  }
}

/**
 * A Key_Shared subscription: competing consumers, each key on one consumer at a time, so a key's
 * messages stay in order across the service's replicas. Retries as on Shared.
 */
export class PulsarKeyShared extends PulsarSharedBase {
  readonly subscriptionType = "Key_Shared" as const;
  readonly allowOutOfOrderDelivery: boolean;

  constructor(topic: string, options: PulsarKeySharedOptions = {}) {
    super(topic, options);
    this.allowOutOfOrderDelivery = options.allowOutOfOrderDelivery ?? false;
  }

  declareRetry(declaration: RetryDeclaration): PulsarKeyShared {
    return new PulsarKeyShared(this.name, { ...this.#options(), retry: declaration });
  }

  withSubscription(subscription: string): PulsarKeyShared {
    return new PulsarKeyShared(this.name, { ...this.#options(), subscription });
  }

  #options(): PulsarKeySharedOptions {
    return { ...this.sharedOptions(), allowOutOfOrderDelivery: this.allowOutOfOrderDelivery };
  }
}

/**
 * What Exclusive and Failover have in common: one consumer reads at a time and the broker counts
 * no redeliveries, so a requeue is a copy this client publishes to the retry topic, which the
 * subscription also reads, carrying `x-ruststream-retry-count`.
 */
abstract class PulsarSingleBase extends PulsarTopicBase implements AddressedSource {
  readonly copies = "addressed" as const;
  declare readonly subscription: string;

  constructor(topic: string, options: PulsarExclusiveOptions) {
    super(topic, options);
    if (this.subscription === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `${this.constructor.name}("${topic}") needs a subscription: its retry copies go to <topic>-<subscription>-RETRY, which the app must know before it starts`,
      );
    }
  }

  /** The retry topic: the runtime's retry copies go there, and the subscription reads it. */
  get redeliveryAddress(): string {
    return this.retryTopic;
  }
}

/** An Exclusive subscription: one consumer (one process) reads the topic, in order. */
export class PulsarExclusive extends PulsarSingleBase {
  readonly subscriptionType = "Exclusive" as const;

  // biome-ignore lint/complexity/noUselessConstructor: the options type is the one that differs
  constructor(topic: string, options: PulsarExclusiveOptions) {
    super(topic, options);
  }
}

/**
 * A Failover subscription: one active consumer reads (per partition), the others stand by and take
 * over when it leaves; unacked messages go to the new active one.
 */
export class PulsarFailover extends PulsarSingleBase {
  readonly subscriptionType = "Failover" as const;

  // biome-ignore lint/complexity/noUselessConstructor: the options type is the one that differs
  constructor(topic: string, options: PulsarExclusiveOptions) {
    super(topic, options);
  }
}

/** The descriptors whose broker moves retries (Shared, Key_Shared). */
export type PulsarSharedSource = PulsarShared | PulsarKeyShared;
/** The descriptors whose retries are copies (Exclusive, Failover). */
export type PulsarSingleSource = PulsarExclusive | PulsarFailover;
/** Every descriptor the Pulsar broker understands. */
export type PulsarSource = PulsarSharedSource | PulsarSingleSource;

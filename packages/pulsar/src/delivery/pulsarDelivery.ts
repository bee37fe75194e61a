import { HeaderMap, type OutgoingMessage, type ReadonlyHeaderMap } from "@ruststream/core";
import { attemptOf, DeliveryBase } from "@ruststream/core/broker";
import type { LinkMessage } from "../link/link.js";
import type { PulsarPosition } from "../position.js";
import { PulsarMessagePosition } from "../position.js";
import type { PulsarPublishOptions } from "../publisher.js";
import type { MessageId } from "../wire/messageId.js";

const encoder = new TextEncoder();

/** What a delivery needs from the subscription it came from. */
export interface DeliveryOwner {
  /** The topic as the descriptor names it: every delivery's `name`. */
  readonly name: string;
  /** The topic's full name. */
  readonly topic: string;
  readonly subscription: string;
  /** The retry topic's full name, where the subscription reads one. */
  readonly retryTopic: string | undefined;
  /** Throws `closed` once the connection has shut down. */
  assertOpen(): void;
  /** Acknowledges on the consumer the message came through (sent, not awaited). */
  acknowledge(delivery: PulsarDelivery): void;
  /** Asks the broker for the message again (Shared, Key_Shared: counted). */
  redeliver(delivery: PulsarDelivery): void;
  /** Publishes a copy through a producer creating `initialSubscription`; resolves on the receipt. */
  publishCopy(
    message: OutgoingMessage<PulsarPublishOptions>,
    initialSubscription: string,
  ): Promise<void>;
  /** Wall-clock milliseconds, for a copy's delivery time. */
  now(): number;
  /** The delivery is settled for good: no longer held at close. */
  settled(delivery: PulsarDelivery): void;
}

/**
 * A delivery of a Pulsar message: payload, topic, message id as position, properties as headers,
 * the message key as partition key and, on a partitioned topic, the partition index. SharedDelivery
 * and SingleDelivery add how each verb settles.
 */
export abstract class PulsarDelivery extends DeliveryBase<PulsarPosition> {
  readonly name: string;
  readonly position: PulsarPosition;
  /** Whether it came from the subscription's retry topic rather than the topic itself. */
  readonly fromRetryTopic: boolean;
  protected readonly owner: DeliveryOwner;
  readonly #message: LinkMessage;
  #headers: HeaderMap | undefined;

  constructor(owner: DeliveryOwner, message: LinkMessage, fromRetryTopic: boolean) {
    super();
    this.owner = owner;
    this.#message = message;
    this.name = owner.name;
    this.fromRetryTopic = fromRetryTopic;
    this.position = new PulsarMessagePosition(message.messageId, { retry: fromRetryTopic });
  }

  /** The message as the link handed it over (for acks). */
  get message(): LinkMessage {
    return this.#message;
  }
  /** The topic it came from, in full: a partition's name on a partitioned topic. */
  get topic(): string {
    return this.#message.topic;
  }
  /**
   * The topic the message was published to for this subscription: its own topic (a partition's
   * name where partitioned), or, for a copy read from the retry topic, the subscription's topic.
   * What a dead letter names as its `REAL_TOPIC`.
   */
  get sourceTopic(): string {
    return this.fromRetryTopic ? this.owner.topic : this.#message.topic;
  }
  get messageId(): MessageId {
    return this.#message.messageId;
  }
  /** When the broker's producer stamped it (ms since the epoch). */
  get publishTime(): number {
    return this.#message.publishTime;
  }
  /** The application's own time for it, where the producer set one. */
  get eventTime(): number | undefined {
    return this.#message.eventTime;
  }
  get orderingKey(): Uint8Array | undefined {
    return this.#message.orderingKey;
  }
  get payload(): Uint8Array {
    return this.#message.payload;
  }
  /** The message properties, each a header; built once, on first read. */
  get headers(): ReadonlyHeaderMap {
    if (this.#headers === undefined) {
      const headers = new HeaderMap();
      for (const [name, value] of this.#message.properties) headers.set(name, value);
      this.#headers = headers;
    }
    return this.#headers;
  }
  get partitionKey(): Uint8Array | undefined {
    const key = this.#message.key;
    return key === undefined ? undefined : encoder.encode(key);
  }
  override get partition(): number | undefined {
    const partition = this.#message.partition;
    return partition >= 0 ? partition : undefined;
  }

  /** The runtime's attempt at this topic, the one a cap is checked against. */
  get attempt(): number {
    return attemptOf(this);
  }

  /**
   * A copy of this message for `topic`: payload, headers, key, ordering key and event time as they
   * arrived, with `headers` in place of the delivery's own where given.
   */
  protected copyFor(
    topic: string,
    headers: ReadonlyHeaderMap,
    options: PulsarPublishOptions = {},
  ): OutgoingMessage<PulsarPublishOptions> {
    const message = this.#message;
    const copied: { -readonly [K in keyof PulsarPublishOptions]: PulsarPublishOptions[K] } = {
      ...options,
    };
    if (message.orderingKey !== undefined) copied.orderingKey = message.orderingKey;
    if (message.eventTime !== undefined) copied.eventTime = message.eventTime;
    return {
      name: topic,
      payload: message.payload,
      headers,
      ...(message.key === undefined ? {} : { partitionKey: message.key }),
      options: copied,
      cause: this,
    };
  }

  /** Acks once `work` (a copy's publish) is confirmed: a crash in between duplicates, never loses. */
  protected thenAck(work: Promise<void>): Promise<"ok"> {
    return work.then(() => {
      this.owner.assertOpen();
      this.owner.acknowledge(this);
      this.owner.settled(this);
      return "ok" as const;
    });
  }

  /** Acks now. */
  protected ackNow(): "ok" {
    this.owner.assertOpen();
    this.owner.acknowledge(this);
    this.owner.settled(this);
    return "ok";
  }
}

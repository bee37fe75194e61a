// What the broker needs from its connection to Pulsar: the only place it meets the server. The
// wire client stands behind it against a real broker (clientLink.ts); the in-process mode puts a
// stand-in of the server behind the same interface (src/inProcess/), so every subscription,
// delivery and publisher above it runs unchanged in TestApp.
import type { LinkStates } from "@ruststream/core/broker";
import type { ConsumerOptions } from "../wire/consumer/consumerOptions.js";
import type { ConsumerStats } from "../wire/consumer/consumerStats.js";
import type { MessageId } from "../wire/messageId.js";
import type { OutgoingMessage, ProducerOptions } from "../wire/producer/producerOptions.js";

/** One received message, as both the wire client and the stand-in hand it over. */
export interface LinkMessage {
  /** The topic it came from: a partition's name on a partitioned topic. */
  readonly topic: string;
  readonly messageId: MessageId;
  readonly payload: Uint8Array;
  readonly properties: ReadonlyMap<string, string>;
  readonly publishTime: number;
  /** 0 on first delivery; counted by the broker on Shared and Key_Shared subscriptions only. */
  readonly redeliveryCount: number;
  readonly key: string | undefined;
  readonly orderingKey: Uint8Array | undefined;
  readonly eventTime: number | undefined;
  /** The partition index; -1 on a non-partitioned topic. */
  readonly partition: number;
}

/** A consumer on one topic (every partition of a partitioned one), pulled without waiting. */
export interface LinkConsumer {
  /** The number of partitions; 0 for a non-partitioned topic. */
  readonly partitions: number;
  /** The next message the server pushed under the flow permits, or `undefined`; throws once failed. */
  tryReceive(): LinkMessage | undefined;
  /** Calls `onReadable` when a message may be waiting (or the consumer failed); returns its undo. */
  listen(onReadable: () => void): () => void;
  /** Sent without waiting for an answer, as Pulsar acks are. */
  ack(message: LinkMessage): void;
  /** Asks the server to deliver the message again (Shared, Key_Shared: that one, counted). */
  nack(message: LinkMessage): void;
  /** Moves the subscription to a message id, or to a publish time (ms) on every partition. */
  seek(target: MessageId | number): Promise<void>;
  /** The last message id stored on `partition` (0 on a non-partitioned topic). */
  lastMessageId(partition: number): Promise<MessageId>;
  /** The broker's counts for the subscription, summed over every partition (CONSUMER_STATS). */
  stats(): Promise<ConsumerStats>;
  close(): Promise<void>;
}

/** A producer on one topic (routing over its partitions). */
export interface LinkProducer {
  /** Resolves on the server's receipt; a payload over its limit is refused before it is sent. */
  send(message: OutgoingMessage): Promise<MessageId>;
  /** Resolves once every send so far is confirmed or failed. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** What the broker does with its server. */
export interface Link {
  subscribe(options: ConsumerOptions): Promise<LinkConsumer>;
  createProducer(options: ProducerOptions): Promise<LinkProducer>;
  /** Closes every producer, consumer and connection it opened; bounded. */
  close(): Promise<void>;
  /**
   * The state of every producer's and consumer's attachment, as one (core's LinkStates). The
   * in-process stand-in has none: nothing lies between it and the broker.
   */
  readonly states?: LinkStates;
  /**
   * In-process only: stores a message at once, as if a producer outside the process sent it, for
   * a test's synchronous `inject`. Throws what a send would reject with. A server link has none.
   */
  readonly publishNow?: (topic: string, message: OutgoingMessage) => void;
}

// What the broker needs from its connection to RabbitMQ: the only place it meets the server.
// amqplib stands behind it against a real node (client/amqpLink.ts: our connection, its recovery,
// the channels); the in-process mode puts a stand-in of the server behind the same interface
// (inProcess/), so every subscription, delivery and publisher above it runs unchanged in TestApp.
import type { LinkStates } from "@ruststream/core/broker";
import type { Table, Topology } from "./topology/topology.js";

/** A message's AMQP properties, as both sides carry them. */
export interface LinkProperties {
  readonly headers: Table;
  readonly contentType?: string | undefined;
  readonly correlationId?: string | undefined;
  readonly replyTo?: string | undefined;
  readonly messageId?: string | undefined;
  readonly priority?: number | undefined;
  /** Per-message TTL in milliseconds, as text (AMQP's `expiration`). */
  readonly expiration?: string | undefined;
  /** Delivery mode 2: written to disk by a durable queue. */
  readonly persistent?: boolean | undefined;
  readonly timestamp?: number | undefined;
}

/** One message handed to a consumer. */
export interface LinkDelivery {
  readonly queue: string;
  readonly exchange: string;
  readonly routingKey: string;
  readonly content: Uint8Array;
  readonly properties: LinkProperties;
  /** The server delivered it before (to this or another consumer) and it came back. */
  readonly redelivered: boolean;
  /** `basic.ack`. Throws `broker-failure` when the channel it came on is gone (it comes back). */
  ack(): void;
  /** `basic.reject`, back to the queue with `requeue`, else dropped or dead-lettered. */
  reject(requeue: boolean): void;
}

export interface ConsumeRequest {
  readonly queue: string;
  /** `basic.qos` on the consumer's own channel. */
  readonly prefetch: number;
  /** `basic.consume` arguments (a stream queue's `x-stream-offset`). */
  readonly arguments: Table;
  readonly onDelivery: (delivery: LinkDelivery) => void;
  /** The server ended the consumer (its queue was deleted, say): no more deliveries come. */
  readonly onCancelled: (reason: string) => void;
}

export interface LinkConsumer {
  /** Stops deliveries and closes the channel now: what was delivered and not settled goes back. */
  cancel(): Promise<void>;
  /**
   * Stops deliveries (resolves once the server confirmed: nothing is delivered after) and keeps
   * the channel open until every delivery made on it is settled, then closes it; `cancel()` or the
   * link's `close()` ends the wait sooner, and what is still open then goes back.
   */
  stop(): Promise<void>;
}

export interface StreamBounds {
  readonly first: bigint;
  readonly next: bigint;
}

export interface PublishRequest {
  readonly exchange: string;
  readonly routingKey: string;
  readonly content: Uint8Array;
  readonly properties: LinkProperties;
  /** An unroutable message is an error naming the exchange and routing key, not lost in silence. */
  readonly mandatory: boolean;
}

export interface Link {
  /**
   * Declares the topology (`declare`), or checks that the server has it as given: a missing or
   * differently declared queue or exchange rejects with `invalid-argument` naming the difference.
   * A declared topology is declared again after every reconnect.
   */
  ensure(topology: Topology, declare: boolean): Promise<void>;
  consume(request: ConsumeRequest): Promise<LinkConsumer>;
  /**
   * The offsets a stream queue holds: the first it keeps and the next it will write (equal when it
   * holds nothing). Rejects with `invalid-argument` when there is no such stream.
   */
  streamBounds(queue: string): Promise<StreamBounds>;
  /**
   * The ready messages of each queue, in order (a passive `queue.declare`'s `message_count`: what
   * consumers hold unacked is not in it; a stream's is its length). Asked on a channel of its own,
   * so a missing queue fails this question alone: it rejects with `invalid-argument` naming it.
   */
  queueCounts(queues: readonly string[]): Promise<readonly number[]>;
  /** Resolves once the server confirmed the message; rejects on its nack or a return. */
  publish(request: PublishRequest): Promise<void>;
  /**
   * Publishes `requests` in one AMQP transaction (tx.select, the publishes, tx.commit), after the
   * link's earlier transactions. Resolves once the server committed every message with each
   * `mandatory` one routed. Rejects with a `RustStreamError` that says what became of them
   * (transactionRefusal.ts): `broker-failure`, nothing committed, when the server refused a message
   * before the commit (a missing exchange) or the channel was closed before it was sent;
   * `publish-refused` when the commit returned mandatory messages as unroutable (the rest is
   * committed: RabbitMQ routes at commit and takes nothing back); `broker-failure`, the outcome
   * unknown, when the commit got no answer.
   */
  commit(requests: readonly PublishRequest[]): Promise<void>;
  /**
   * Publishes a request whose replies come back by direct reply-to: the answer names the address
   * to put in `reply-to`, and each reply reaches `onReply`, set once per link.
   */
  publishRequest(request: PublishRequest): Promise<void>;
  onReply(listener: (reply: LinkDelivery) => void): void;
  /** The pseudo-queue replies are addressed to (`amq.rabbitmq.reply-to`). */
  readonly replyTo: string;
  /** Closes every channel and the connection; bounded. */
  close(): Promise<void>;
  /** The connection's state (core's LinkStates); the stand-in has none, nothing lies between. */
  readonly states?: LinkStates;
  /**
   * In-process only: routes a message at once, as if a client outside the process published it,
   * for a test's synchronous `inject`. Throws what a publish would reject with.
   */
  readonly publishNow?: (request: PublishRequest) => void;
}

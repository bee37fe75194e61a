import {
  HeaderMap,
  headerNames,
  type OutgoingMessage,
  type ReadonlyHeaderMap,
  type RustStreamError,
  readRetryCount,
  type SettleResult,
} from "@ruststream/core";
import {
  attemptOf,
  DeliveryBase,
  deadLetterCopyOf,
  deliveriesOf,
  writeDeadLetterRetryCount,
} from "@ruststream/core/broker";
import { readHeaders, tableNumber } from "../amqpHeaders.js";
import type { DelayedCopy } from "../host.js";
import type { LinkDelivery } from "../link.js";
import { rabbitHeaderNames } from "../names.js";
import { RabbitPosition } from "../position.js";
import type { QueueType } from "../topology/topology.js";

/** A quorum queue's cap and dead letter, as the mount declared them (the server keeps the cap). */
export interface QueueCap {
  readonly maxAttempts: number;
  readonly deadLetter: string;
}

/** What a delivery tells its subscription, and asks of it. */
export interface DeliveryOwner {
  /** The run of consumers now (a stream's seek starts another). */
  readonly epoch: number;
  assertOpen(): void;
  released(delivery: QueueDelivery): void;
  publishLater(copy: DelayedCopy, delayMs: number): Promise<void>;
  deliveryLimit(queue: string): number | undefined;
  /** The queue's declared cap, if it has one. */
  readonly cap: QueueCap | undefined;
  publishDeadLetter(message: OutgoingMessage): Promise<void>;
}

/**
 * A delivery from a queue. Ack is `basic.ack`; a drop is `basic.reject` without requeue (the
 * queue's dead-letter exchange applies, where it has one). A requeue is `basic.reject` with requeue
 * on a quorum queue, which counts it; a classic queue counts nothing, and a stream cannot requeue,
 * so there it answers `unsupported` and the runtime republishes a counted copy. `nackAfter` copies
 * the message to the queue's wait queue (its TTL brings it back), then acks: never held in memory,
 * at worst delivered twice, never lost. On a stream it answers `unsupported`: the node drops a dead
 * letter routed to a stream, so the wait queue's copy would be lost.
 *
 * A wait queue's copy starts the server's count afresh, so on a quorum queue whose cap the server
 * keeps, the server counts the copy's deliveries alone and would bring it back past the mount's
 * `maxAttempts`. Where the attempts so far (the copy's retry count and the server's count) reach
 * the cap and the server's count alone does not, a requeue or a delayed retry moves the message to
 * the dead letter here instead, as the runtime writes its own (origin, retry count), then acks. A
 * copy that arrives past the cap (its service died in the last attempt's handler) the runtime gives
 * up unhandled with a drop, which moves it the same way.
 */
export class QueueDelivery extends DeliveryBase<RabbitPosition> {
  readonly #owner: DeliveryOwner;
  readonly #message: LinkDelivery;
  readonly #type: QueueType;
  /** The run of consumers it came from (its owner's epoch when it arrived). */
  readonly epoch: number;
  /** Its arrival on the subscription, from 1: the position is made from it when asked for. */
  readonly #sequence: number;
  #position: RabbitPosition | undefined;
  /** Read once, when the runtime first asks (it does for every delivery: its attempt). */
  #headers: HeaderMap | undefined;
  #unreadable: RustStreamError | undefined;

  constructor(
    owner: DeliveryOwner,
    message: LinkDelivery,
    type: QueueType,
    sequence: number,
    epoch: number,
  ) {
    super();
    this.#owner = owner;
    this.#message = message;
    this.#type = type;
    this.#sequence = sequence;
    this.epoch = epoch;
  }

  /**
   * Where it sits, made when first asked for (the runtime asks only to log a failure, a stream's
   * seek to it): on a stream queue the message's offset, which the node writes on every delivery.
   */
  get position(): RabbitPosition {
    this.#position ??= new RabbitPosition(this.name, this.#sequence, this.#streamOffset());
    return this.#position;
  }

  #streamOffset(): bigint | undefined {
    if (this.#type !== "stream") return undefined;
    const offset = this.#message.properties.headers["x-stream-offset"];
    return typeof offset === "number" || typeof offset === "bigint" ? BigInt(offset) : undefined;
  }

  get name(): string {
    return this.#message.queue;
  }
  get payload(): Uint8Array {
    return this.#message.content;
  }
  get headers(): ReadonlyHeaderMap {
    return this.#headers ?? this.#readHeaders();
  }
  /** A header the sender nested past the limit: the runtime settles it by the decode policy. */
  override get decodeError(): Error | undefined {
    if (this.#headers === undefined) this.#readHeaders();
    return this.#unreadable;
  }
  get partitionKey(): Uint8Array | undefined {
    return this.headers.get(rabbitHeaderNames.partitionKey);
  }
  /** A quorum queue's count (`x-delivery-count` is the returns before this one); others keep none. */
  get redeliveryCount(): number | undefined {
    if (this.#type !== "quorum") return undefined;
    return (tableNumber(this.#message.properties.headers, "x-delivery-count") ?? 0) + 1;
  }

  /**
   * The headers, and on a copy the server moved for a quorum queue's delivery limit, the attempts
   * it had: the server writes only `x-death`, and the limit is the source queue's, known where this
   * connection declared or checked that queue (the count stays as it came elsewhere).
   */
  #readHeaders(): HeaderMap {
    const headers = new HeaderMap();
    this.#unreadable = readHeaders(this.#message.properties, headers);
    this.#headers = headers;
    const deaths = this.#message.properties.headers["x-death"];
    const last = Array.isArray(deaths)
      ? (deaths[0] as Record<string, unknown> | undefined)
      : undefined;
    if (last?.reason === "delivery_limit" && typeof last.queue === "string") {
      const limit = this.#owner.deliveryLimit(last.queue);
      if (limit !== undefined) {
        writeDeadLetterRetryCount(headers, readRetryCount(headers) + limit + 1);
      }
    }
    return headers;
  }

  /**
   * Never handed out, its subscription closing: back to the queue at once (`basic.reject` with
   * requeue). A stream keeps every message whatever its readers do, and refuses a reject: the ack
   * only gives the consumer's credit back. Settling on a channel already gone throws, and that
   * channel's close gave the message back already.
   */
  giveBack(): void {
    try {
      if (this.#type === "stream") this.#message.ack();
      else this.#message.reject(true);
    } catch {
      // The channel closed (a lost connection, the shutdown): the node took the message back.
    }
  }

  protected settleAck(): SettleResult {
    this.#owner.assertOpen();
    if (this.#stale()) return "ok";
    this.#message.ack();
    this.#owner.released(this);
    return "ok";
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.#owner.assertOpen();
    if (requeue && this.#type !== "quorum") return "unsupported";
    if (this.#stale()) return "ok";
    const cap = this.#owner.cap;
    if (cap !== undefined) {
      const attempt = attemptOf(this);
      // The server moves a requeue whose own count reaches the cap; one the copy's count made up,
      // not. A drop of what arrived past the cap (the runtime gives it up unhandled) is moved here
      // too: the server's move would carry neither the origin nor the attempts.
      const spent = requeue
        ? attempt >= cap.maxAttempts && (this.redeliveryCount ?? 1) < cap.maxAttempts
        : attempt > cap.maxAttempts;
      if (spent) return this.#deadLetter(cap.deadLetter);
    }
    if (this.#type === "stream") {
      // A stream keeps every message whatever its readers do: dropping is moving past it.
      this.#message.ack();
    } else {
      this.#message.reject(requeue);
    }
    this.#owner.released(this);
    return "ok";
  }

  /**
   * Handed out before the stream's subscription sought elsewhere: its consumer is gone, and a
   * stream keeps every message whatever its readers do, so settling it only moves past it.
   */
  #stale(): boolean {
    return this.epoch !== this.#owner.epoch;
  }

  protected override settleNackAfter(ms: number): SettleResult {
    this.#owner.assertOpen();
    // 3.10 drops a dead letter routed to a stream (seen on the node): a wait queue could not bring
    // the copy back, so the runtime holds it for the delay and appends it itself.
    if (this.#type === "stream") return "unsupported";
    // At the cap a copy would only come back past it: the server never moves what it has not seen.
    const cap = this.#owner.cap;
    if (cap !== undefined && attemptOf(this) >= cap.maxAttempts) {
      return this.#deadLetter(cap.deadLetter);
    }
    return this.#copyLater(ms);
  }

  /**
   * Publishes the message to the dead letter with its origin and the deliveries it had, as the
   * runtime's dead letters carry them, then acks: at worst moved twice, never lost.
   */
  async #deadLetter(deadLetter: string): Promise<"ok"> {
    const { headers, deadLetterOrigin } = deadLetterCopyOf(this, "max-attempts");
    // The dead-letter queue counts its own deliveries: a count carried in would read as returns.
    headers.delete("x-delivery-count");
    await this.#owner.publishDeadLetter({
      name: deadLetter,
      payload: this.#message.content,
      headers,
      deadLetterOrigin,
    });
    this.#owner.assertOpen();
    this.#message.ack();
    this.#owner.released(this);
    return "ok";
  }

  async #copyLater(ms: number): Promise<"ok"> {
    const delay = Math.ceil(ms);
    const headers = { ...this.#message.properties.headers };
    // The copy starts the server's count afresh: it carries the attempts so far in the header.
    delete headers["x-delivery-count"];
    headers[headerNames.retryCount] = String(deliveriesOf(this));
    // A copy of a message the node moved carries the count it was moved with, which only its
    // delivery knew (the node writes `x-death`, and the wait queue's own death goes first in it).
    const moved = this.headers.getString(headerNames.deadLetterRetryCount);
    if (moved !== undefined) headers[headerNames.deadLetterRetryCount] = moved;
    await this.#owner.publishLater(
      {
        queue: this.name,
        content: this.#message.content,
        properties: {
          ...this.#message.properties,
          headers,
          expiration: undefined,
          persistent: true,
        },
      },
      delay,
    );
    this.#owner.assertOpen();
    this.#message.ack();
    this.#owner.released(this);
    return "ok";
  }
}

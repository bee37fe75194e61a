import type { Clock } from "@ruststream/core";
import type { Coordinator } from "@ruststream/core/broker";
import type { LinkDelivery } from "../link.js";
import { type QueueSpec, queueTypeOf, type Table } from "../topology/topology.js";
import type { DeathReason, StoredMessage } from "./storedMessage.js";

/** What a queue needs from the stand-in server around it. */
export interface QueueHost {
  readonly clock: Clock;
  readonly coordinator: Coordinator;
  /** Moves a message to the queue's dead-letter exchange, or lets it go when it has none. */
  deadLetter(queue: StandInQueue, message: StoredMessage, reason: DeathReason): void;
}

/** A consumer of a stand-in queue: its prefetch, what it holds, and where deliveries go. */
export interface StandInConsumer {
  readonly prefetch: number;
  readonly unacked: Set<StoredMessage>;
  readonly deliver: (delivery: LinkDelivery) => void;
  readonly cancelled: (reason: string) => void;
  open: boolean;
  /** Set by a stop: nothing more is delivered to it, and this is called once it holds nothing. */
  drained?: (() => void) | undefined;
}

/**
 * Stops delivering to `consumer`, as `basic.cancel` does, while what it holds stays settleable;
 * `drained` is called once it holds nothing (at once when it holds nothing now).
 */
export function stopConsumer(consumer: StandInConsumer, drained: () => void): void {
  consumer.drained = drained;
  heldNothing(consumer);
}

/** A settle of a stopped consumer's delivery: the last one it held tells it so. */
export function heldNothing(consumer: StandInConsumer): void {
  const drained = consumer.drained;
  if (drained === undefined || consumer.unacked.size > 0) return;
  consumer.drained = () => {};
  drained();
}

/**
 * A queue as the server keeps one: ready messages in order, handed round-robin to consumers that
 * have room under their prefetch; ack removes, reject with requeue puts back at the head (a quorum
 * queue counts the return, adds `x-delivery-count`, and past `x-delivery-limit` dead-letters it),
 * reject without requeue dead-letters (or drops, without a dead-letter exchange). A TTL, the
 * queue's `x-message-ttl` or the message's `expiration`, dead-letters what it runs out on: what the
 * wait queues of delayed retries rely on.
 */
export class StandInQueue {
  readonly spec: QueueSpec;
  readonly #host: QueueHost;
  readonly #ready: StoredMessage[] = [];
  readonly #consumers: StandInConsumer[] = [];
  #next = 0;
  #dispatching = false;

  constructor(spec: QueueSpec, host: QueueHost) {
    this.spec = spec;
    this.#host = host;
  }

  get name(): string {
    return this.spec.name;
  }

  get messageCount(): number {
    return this.#ready.length;
  }

  enqueue(message: StoredMessage): void {
    const ttl = ttlOf(this.spec.arguments["x-message-ttl"], message.properties.expiration);
    if (ttl !== undefined) {
      message.expiresAt = this.#host.clock.now() + ttl;
      const timer = this.#host.clock.setTimer(ttl, () => this.#expire(message));
      message.cancelExpiry = () => timer.cancel();
    }
    this.#ready.push(message);
    this.#dispatch();
  }

  addConsumer(consumer: StandInConsumer): void {
    this.#consumers.push(consumer);
    this.#dispatch();
  }

  /** The consumer is gone: what it held goes back to the queue, counted as a return. */
  removeConsumer(consumer: StandInConsumer): void {
    consumer.open = false;
    const at = this.#consumers.indexOf(consumer);
    if (at >= 0) this.#consumers.splice(at, 1);
    const held = [...consumer.unacked];
    consumer.unacked.clear();
    for (const message of held.reverse()) this.#returned(message);
    this.#dispatch();
  }

  /** Every consumer is told the queue is gone (deleted). */
  cancelAll(reason: string): void {
    for (const consumer of [...this.#consumers]) {
      this.removeConsumer(consumer);
      consumer.cancelled(reason);
    }
  }

  ack(consumer: StandInConsumer, message: StoredMessage): void {
    if (!consumer.unacked.delete(message)) return;
    this.#dispatch();
    this.#settledForGood(message);
    heldNothing(consumer);
  }

  reject(consumer: StandInConsumer, message: StoredMessage, requeue: boolean): void {
    if (!consumer.unacked.delete(message)) return;
    if (requeue) {
      this.#returned(message);
      this.#dispatch();
    } else {
      this.#dispatch();
      this.#settledForGood(message);
      this.#host.deadLetter(this, message, "rejected");
    }
    heldNothing(consumer);
  }

  /** Back at the head; a quorum queue counts it, and past its delivery limit moves it on. */
  #returned(message: StoredMessage): void {
    if (queueTypeOf(this.spec) === "quorum") {
      message.deliveryCount++;
      const limit = this.spec.arguments["x-delivery-limit"];
      if (typeof limit === "number" && message.deliveryCount > limit) {
        this.#settledForGood(message);
        this.#host.deadLetter(this, message, "delivery_limit");
        return;
      }
    }
    message.redelivered = true;
    this.#ready.unshift(message);
  }

  #settledForGood(message: StoredMessage): void {
    const counter = message.countedBy;
    if (counter === undefined) return;
    message.countedBy = undefined;
    counter.consumed();
  }

  #expire(message: StoredMessage): void {
    const at = this.#ready.indexOf(message);
    // Held by a consumer: a TTL applies to messages waiting in the queue only.
    if (at < 0) return;
    this.#ready.splice(at, 1);
    this.#settledForGood(message);
    this.#host.deadLetter(this, message, "expired");
  }

  /** Hands ready messages to consumers with room, round-robin, each delivery in its own task. */
  #dispatch(): void {
    if (this.#dispatching) return;
    this.#dispatching = true;
    try {
      while (this.#ready.length > 0) {
        const consumer = this.#nextWithRoom();
        if (consumer === undefined) return;
        const message = this.#ready.shift() as StoredMessage;
        message.cancelExpiry?.();
        message.cancelExpiry = undefined;
        consumer.unacked.add(message);
        if (message.countedBy === undefined) {
          message.countedBy = this.#host.coordinator;
          message.countedBy.enqueued();
        }
        const delivery = this.#delivery(consumer, message);
        queueMicrotask(() => {
          if (consumer.open) consumer.deliver(delivery);
        });
      }
    } finally {
      this.#dispatching = false;
    }
  }

  #nextWithRoom(): StandInConsumer | undefined {
    for (let i = 0; i < this.#consumers.length; i++) {
      const consumer = this.#consumers[(this.#next + i) % this.#consumers.length];
      if (
        consumer !== undefined &&
        consumer.drained === undefined &&
        consumer.unacked.size < consumer.prefetch
      ) {
        this.#next = (this.#next + i + 1) % this.#consumers.length;
        return consumer;
      }
    }
    return undefined;
  }

  #delivery(consumer: StandInConsumer, message: StoredMessage): LinkDelivery {
    const quorumCount: Table =
      queueTypeOf(this.spec) === "quorum" && message.deliveryCount > 0
        ? { "x-delivery-count": message.deliveryCount }
        : {};
    const settle = (work: () => void) => {
      if (!consumer.open || !consumer.unacked.has(message)) {
        throw new Error(
          `a delivery of queue "${this.name}" was settled after its consumer closed or twice (the server closes the channel: PRECONDITION_FAILED - unknown delivery tag)`,
        );
      }
      work();
    };
    return {
      queue: this.name,
      exchange: message.exchange,
      routingKey: message.routingKey,
      content: message.content,
      properties: {
        ...message.properties,
        headers: { ...message.properties.headers, ...quorumCount },
      },
      redelivered: message.redelivered,
      ack: () => settle(() => this.ack(consumer, message)),
      reject: (requeue) => settle(() => this.reject(consumer, message, requeue)),
    };
  }
}

/** The shorter of the queue's and the message's TTL, in milliseconds; undefined: none. */
function ttlOf(queueTtl: unknown, expiration: string | undefined): number | undefined {
  const values = [
    typeof queueTtl === "number" ? queueTtl : undefined,
    expiration === undefined ? undefined : Number(expiration),
  ].filter((v): v is number => v !== undefined && Number.isFinite(v) && v >= 0);
  return values.length === 0 ? undefined : Math.min(...values);
}

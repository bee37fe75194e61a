import { RustStreamError, type Subscription } from "@ruststream/core";
import { type Coordinator, subscriptionIterator } from "@ruststream/core/broker";
import { ChannelPosition } from "../position.js";
import type { Frame, Link } from "../wire/link.js";
import { ChannelDelivery, type DeliveryOwner } from "./channelDelivery.js";

/** What a subscription needs from its connection: no more, so it never imports the broker. */
export interface SubscriptionHost {
  readonly link: Link;
  readonly coordinator: Coordinator;
  assertOpen(): void;
  forget(subscription: ChannelSubscription): void;
}

const done: IteratorResult<ChannelDelivery, undefined> = { done: true, value: undefined };

/**
 * A subscription to a channel: frames arriving while nobody pulls wait in order; `next()` takes the
 * oldest or waits for one. Pull-based, so the consumer sets the pace.
 */
export class ChannelSubscription implements Subscription<ChannelDelivery>, DeliveryOwner {
  readonly name: string;
  readonly #host: SubscriptionHost;
  readonly #queue: ChannelDelivery[] = [];
  /** Counted for the coordinator and not yet released. */
  readonly #counted = new Set<ChannelDelivery>();
  readonly #unlisten: () => void;
  #arrivals = 0n;
  #waiting: ((delivery: ChannelDelivery | undefined) => void) | undefined;
  #closed = false;

  constructor(host: SubscriptionHost, name: string) {
    this.#host = host;
    this.name = name;
    this.#unlisten = host.link.listen(name, (frame) => this.#arrived(frame));
  }

  async next(): Promise<IteratorResult<ChannelDelivery, undefined>> {
    this.#host.assertOpen();
    const ready = this.#queue.shift();
    if (ready !== undefined) return { done: false, value: ready };
    if (this.#closed) return done;
    if (this.#waiting !== undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `a second next() on "${this.name}" while one is waiting: pull one at a time`,
      );
    }
    const delivery = await new Promise<ChannelDelivery | undefined>((resolve) => {
      this.#waiting = resolve;
    });
    // Woken by a shutdown: the connection is gone, and says so.
    this.#host.assertOpen();
    return delivery === undefined ? done : { done: false, value: delivery };
  }

  async close(): Promise<void> {
    this.#closeNow();
  }

  [Symbol.asyncIterator](): AsyncIterator<ChannelDelivery, undefined> {
    return subscriptionIterator(this);
  }

  /** Called by the connection's shutdown: a waiting pull wakes and rejects with `closed`. */
  revoke(): number {
    const dropped = this.#queue.length;
    this.#closeNow();
    return dropped;
  }

  // DeliveryOwner
  assertOpen(): void {
    this.#host.assertOpen();
  }
  released(delivery: ChannelDelivery): void {
    if (this.#counted.delete(delivery)) this.#host.coordinator.consumed();
  }

  #arrived(frame: Frame): void {
    const delivery = new ChannelDelivery(this, frame, new ChannelPosition(++this.#arrivals));
    this.#counted.add(delivery);
    this.#host.coordinator.enqueued();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting !== undefined) waiting(delivery);
    else this.#queue.push(delivery);
  }

  #closeNow(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unlisten();
    this.#host.forget(this);
    // Never handed out, so never to be settled: a fire-and-forget wire loses them, as it says.
    for (const delivery of this.#queue.splice(0)) this.released(delivery);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.(undefined);
  }
}

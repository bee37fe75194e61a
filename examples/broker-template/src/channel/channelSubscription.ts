import type { RustStreamError } from "@ruststream/core";
import {
  Arrivals,
  type Coordinator,
  type HostedSubscription,
  PullSubscription,
  type SubscriptionHost,
} from "@ruststream/core/broker";
import { ChannelPosition } from "../position.js";
import type { Frame, Link } from "../wire/link.js";
import { ChannelDelivery, type DeliveryOwner } from "./channelDelivery.js";

/** What a subscription needs from its connection: no more, so it never imports the connection. */
export interface ChannelHost extends SubscriptionHost {
  readonly link: Link;
  readonly coordinator: Coordinator;
}

/**
 * A subscription to a channel: frames arriving while nobody pulls wait in order; a pull takes the
 * oldest (a batch, the oldest few) or waits for one. Pull-based, so the consumer sets the pace.
 * `PullSubscription` gives `next()`, `nextBatch()` and their checks; this class only waits.
 */
export class ChannelSubscription
  extends PullSubscription<ChannelDelivery>
  implements DeliveryOwner, HostedSubscription
{
  readonly name: string;
  readonly #host: ChannelHost;
  readonly #waiting = new Arrivals<ChannelDelivery>();
  /** Counted for the coordinator and not yet released. */
  readonly #counted = new Set<ChannelDelivery>();
  readonly #unlisten: () => void;
  #arrivals = 0n;
  /** Stopped listening and left the connection (closed, or surrendered): once only. */
  #unlistened = false;

  constructor(host: ChannelHost, name: string) {
    super();
    this.#host = host;
    this.name = name;
    this.#unlisten = host.link.listen(name, (frame) => this.#arrived(frame));
  }

  protected async pull(max: number): Promise<readonly ChannelDelivery[]> {
    // Woken by a shutdown, this throws: the connection is gone, and says so.
    if (this.#waiting.length === 0) await this.arrivalOn(this.#waiting);
    // Empty when woken by a close.
    return this.#waiting.take(max);
  }

  async close(): Promise<void> {
    this.#closeNow();
  }

  // HostedSubscription: the connection's shutdown revokes every subscription, then surrenders each.
  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#waiting.wake();
  }

  /** Answers the deliveries that had arrived and were never pulled, lost with the connection. */
  async surrender(): Promise<number> {
    const dropped = this.#waiting.length;
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
    this.#waiting.push(delivery);
  }

  #closeNow(): void {
    this.markClosed();
    if (this.#unlistened) return;
    this.#unlistened = true;
    this.#unlisten();
    this.#host.forget(this);
    // Never handed out, so never to be settled: a fire-and-forget wire loses them, as it says.
    for (const delivery of this.#waiting.clear()) this.released(delivery);
  }
}

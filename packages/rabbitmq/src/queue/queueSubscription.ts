import type { OutgoingMessage, RustStreamError } from "@ruststream/core";
import { Arrivals, type HostedSubscription, PullSubscription } from "@ruststream/core/broker";
import type { DelayedCopy, RabbitHost } from "../host.js";
import type { LinkConsumer, LinkDelivery } from "../link.js";
import type { QueueType, Table } from "../topology/topology.js";
import { type DeliveryOwner, type QueueCap, QueueDelivery } from "./queueDelivery.js";

export interface QueueSubscriptionOptions {
  readonly queue: string;
  readonly type: QueueType;
  readonly prefetch: number;
  readonly arguments: Table;
  /** A quorum queue's declared cap and dead letter (`x-delivery-limit` and its routing key). */
  readonly cap?: QueueCap | undefined;
}

/**
 * A subscription to a queue: one consumer on a channel of its own, its prefetch the server's bound
 * on what arrives ahead of the acks. Deliveries arriving while nobody pulls wait in order; a pull
 * takes the oldest (a batch, the oldest few) or waits for one.
 *
 * `close()` cancels the consumer, gives back at once what arrived and was never handed out, and
 * keeps the channel open until every delivery handed out is settled, then closes it: a handler
 * still running when the app stops acks its message on the channel it came on, and the message is
 * not read again. The connection's shutdown closes the channel whatever is still open: that goes
 * back to the queue. A classic or quorum queue's is a `QueueBacklogSubscription`, a stream's a
 * `StreamSubscription`.
 */
export abstract class QueueSubscription
  extends PullSubscription<QueueDelivery>
  implements DeliveryOwner, HostedSubscription
{
  readonly name: string;
  readonly #host: RabbitHost;
  readonly #options: QueueSubscriptionOptions;
  readonly #waiting = new Arrivals<QueueDelivery>();
  /**
   * Handed out by the current consumer and not settled yet: a count (a set of them churned a hash
   * table on every delivery), which a delivery of an earlier consumer never moves.
   */
  #open = 0;
  #consumer: LinkConsumer | undefined;
  /** Bumped each time the consumer is replaced (a stream's seek): earlier deliveries are stale. */
  #epoch = 0;
  #arrivals = 0;
  #cancelledBy: string | undefined;
  #ended = false;
  /** Closed and its consumer's cancel confirmed: what arrives now goes back at once. */
  #givingBack = false;

  protected constructor(host: RabbitHost, options: QueueSubscriptionOptions) {
    super();
    this.#host = host;
    this.#options = options;
    this.name = options.queue;
  }

  /** The run of consumers a delivery came from: one made before a seek settles nothing. */
  get epoch(): number {
    return this.#epoch;
  }

  protected get host(): RabbitHost {
    return this.#host;
  }

  /**
   * Consumes with `args` (`basic.consume` arguments), replacing the consumer there was: what it
   * handed over and nobody pulled yet is dropped, what it delivers from here on too, and what was
   * handed out settles nothing on the server (a stream keeps every message; moving past is all a
   * settle does there).
   */
  protected async consumeWith(args: Table): Promise<void> {
    const epoch = ++this.#epoch;
    const old = this.#consumer;
    this.#consumer = undefined;
    this.#waiting.clear();
    this.#open = 0;
    await old?.cancel().catch(() => {});
    const consumer = await this.#host.link.consume({
      queue: this.#options.queue,
      prefetch: this.#options.prefetch,
      arguments: args,
      onDelivery: (message) => {
        if (epoch === this.#epoch) this.#arrived(message);
      },
      onCancelled: (reason) => {
        if (epoch !== this.#epoch) return;
        this.#cancelledBy = reason;
        this.#waiting.wake();
      },
    });
    if (epoch !== this.#epoch || this.#ended) {
      await consumer.cancel().catch(() => {});
      return;
    }
    this.#consumer = consumer;
  }

  assertOpen(): void {
    this.#host.assertOpen();
  }

  protected async pull(max: number): Promise<readonly QueueDelivery[]> {
    while (this.#waiting.length === 0) {
      if (this.closed || this.#cancelledBy !== undefined) break;
      await this.arrivalOn(this.#waiting);
    }
    const batch = this.#waiting.take(max);
    this.#open += batch.length;
    // The server ended the consumer (its queue deleted): the subscription ends once drained.
    if (batch.length === 0 && this.#cancelledBy !== undefined) await this.#end(true);
    return batch;
  }

  async close(): Promise<void> {
    await this.#end(true);
  }

  // HostedSubscription: the connection's shutdown revokes every subscription, then surrenders each.
  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#waiting.wake();
  }

  /** Answers the deliveries that go back to the queue: waiting ones, and those handed out unsettled. */
  async surrender(): Promise<number> {
    const returned = this.#waiting.length + this.#open;
    await this.#end(false);
    return returned;
  }

  // DeliveryOwner
  released(delivery: QueueDelivery): void {
    if (delivery.epoch === this.#epoch && this.#open > 0) this.#open--;
  }

  publishLater(copy: DelayedCopy, delayMs: number): Promise<void> {
    return this.#host.publishLater(copy, delayMs);
  }

  deliveryLimit(queue: string): number | undefined {
    return this.#host.deliveryLimit(queue);
  }

  get cap(): QueueCap | undefined {
    return this.#options.cap;
  }

  publishDeadLetter(message: OutgoingMessage): Promise<void> {
    return this.#host.publishDeadLetter(message);
  }

  #arrived(message: LinkDelivery): void {
    const delivery = new QueueDelivery(
      this,
      message,
      this.#options.type,
      ++this.#arrivals,
      this.#epoch,
    );
    if (this.#givingBack) {
      delivery.giveBack();
    } else if (!this.#ended || this.#consumer !== undefined) {
      // Open, or closing with its cancel not yet confirmed (given back with the rest once it is);
      // ended without a drain, its channel's close gives it back.
      this.#waiting.push(delivery);
    }
  }

  /**
   * Ends the subscription. `drain`: the consumer is cancelled, and once the node confirmed it (none
   * arrives after), what arrived and was never handed out goes back; the channel stays open for
   * what was handed out until it is settled. Else the channel closes now and everything unsettled
   * goes back with it.
   */
  async #end(drain: boolean): Promise<void> {
    this.markClosed();
    this.#waiting.wake();
    if (this.#ended) return;
    this.#ended = true;
    this.#host.forget(this);
    this.#open = 0;
    const consumer = this.#consumer;
    this.#consumer = drain ? consumer : undefined;
    if (!drain || consumer === undefined) {
      this.#waiting.clear();
      await consumer?.cancel().catch(() => {});
      return;
    }
    await consumer.stop().catch(() => {});
    this.#givingBack = true;
    for (const delivery of this.#waiting.clear()) delivery.giveBack();
  }
}

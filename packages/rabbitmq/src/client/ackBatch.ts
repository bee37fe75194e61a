import { SettleWatermark } from "@ruststream/core/broker";
import type { Channel, ConsumeMessage } from "amqplib";

/**
 * The acks of one consumer's channel, sent as one `basic.ack` with `multiple` for a run of settled
 * deliveries instead of one frame each. A multiple ack settles every delivery of the channel up to
 * its tag, so it may only name a tag below which nothing handed out is still open: core's
 * SettleWatermark over the delivery tags (handed out in order, settled in any order) says where
 * that is. The tag it names must itself still wait for its ack: the server refuses an unknown tag
 * (a rejected one) with a channel error, so a run ending in rejects is acked up to its last ack.
 *
 * Rejects go out at once, one frame each (they are rare, and a requeue should come back soon).
 * Acks go out once `every` of them are ready, else at the end of the event loop's turn, so the
 * server's prefetch window refills while the handlers run and a last few never wait long.
 */
export class AckBatch {
  readonly #channel: Channel;
  readonly #every: number;
  readonly #watermark = new SettleWatermark();
  /** Acked deliveries whose ack is not sent yet, by tag: the one a multiple ack names is here. */
  readonly #acked = new Map<number, ConsumeMessage>();
  /** Rejected deliveries above `#done`: a multiple ack must not name them. */
  readonly #rejected = new Set<number>();
  /** Every tag up to this one is settled on the server (acked by a sent ack, or rejected). */
  #done = 0;
  /** The tag the next multiple ack names (0: none), and how far it settles (`#done` after it). */
  #ready = 0;
  #readyCovers = 0;
  #scheduled = false;
  #closed = false;

  /** `every`: the acks ready that go out at once (a quarter of the prefetch keeps it refilling). */
  constructor(channel: Channel, every: number) {
    this.#channel = channel;
    this.#every = Math.max(1, every);
  }

  /** Records a delivery handed over on the channel (in tag order). */
  delivered(message: ConsumeMessage): void {
    this.#watermark.delivered(BigInt(message.fields.deliveryTag));
  }

  ack(message: ConsumeMessage): void {
    const tag = message.fields.deliveryTag;
    this.#acked.set(tag, message);
    this.#settled(tag);
  }

  reject(message: ConsumeMessage, requeue: boolean): void {
    const tag = message.fields.deliveryTag;
    this.#channel.reject(message, requeue);
    this.#rejected.add(tag);
    this.#settled(tag);
  }

  /** Sends the acks ready now: before the consumer is cancelled or its channel closed. */
  flush(): void {
    if (this.#closed || this.#ready === 0) return;
    const message = this.#acked.get(this.#ready)!;
    try {
      this.#channel.ack(message, true);
    } catch {
      // The channel is closing under us (amqplib refuses to send on it): the server gives back
      // what it has not seen acked, and the consumer's recovery takes it from there.
      this.close();
      return;
    }
    this.#done = this.#readyCovers;
    this.#ready = 0;
    for (const tag of this.#acked.keys()) if (tag <= this.#done) this.#acked.delete(tag);
    for (const tag of this.#rejected) if (tag <= this.#done) this.#rejected.delete(tag);
  }

  /** The channel closed: nothing more is sent (what was not acked comes back from the server). */
  close(): void {
    this.#closed = true;
    this.#acked.clear();
    this.#rejected.clear();
  }

  #settled(tag: number): void {
    const moved = this.#watermark.settle(BigInt(tag));
    if (moved === undefined) return;
    // Everything below `moved` is settled; the ack names the highest of them still waiting for it.
    const covers = Number(moved) - 1;
    let target = covers;
    while (target > this.#done && this.#rejected.has(target)) target--;
    if (target <= this.#done) {
      // Only rejects since the last ack sent (an ack waiting to go would have stopped the walk):
      // nothing to send, and nothing up to `covers` is open.
      this.#done = covers;
      for (const t of this.#rejected) if (t <= covers) this.#rejected.delete(t);
      return;
    }
    this.#ready = target;
    this.#readyCovers = covers;
    if (target - this.#done >= this.#every) {
      this.flush();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.flush();
      });
    }
  }
}

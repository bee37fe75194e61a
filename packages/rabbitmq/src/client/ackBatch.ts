import { RustStreamError } from "@ruststream/core";
import type { Channel, ConsumeMessage } from "amqplib";

/** A tag's state in the window: handed out, acked here (its ack not sent), or settled otherwise. */
const open = 0;
const acked = 1;
/** Rejected (its reject sent), or a tag the server skipped: a multiple ack must not name it. */
const gone = 2;
/** The ring's first size: it grows to the window the prefetch lets through, once. */
const minRing = 16;

/**
 * The acks of one consumer's channel, sent as one `basic.ack` with `multiple` for a run of settled
 * deliveries instead of one frame each. A multiple ack settles every delivery of the channel up to
 * its tag, so it may only name a tag below which nothing handed out is still open. The tag it names
 * must itself still wait for its ack: the server refuses an unknown tag (a rejected one) with a
 * channel error, so a run ending in rejects is acked up to its last ack.
 *
 * The server numbers a channel's deliveries 1, 2, 3…, so the deliveries not yet settled on the
 * server are a window of consecutive tags, kept in a ring indexed by tag (grown when the window
 * outgrows it; the prefetch bounds it): a delivery and its settle cost a slot's write, with no
 * object, map entry or bigint made for it (core's SettleWatermark, for logs with gaps, made three).
 *
 * Rejects go out at once, one frame each (they are rare, and a requeue should come back soon).
 * Acks go out once `every` of them are ready, else at the end of the event loop's turn, so the
 * server's prefetch window refills while the handlers run and a last few never wait long.
 *
 * A delivery that stays open (a slow handler, a stream's delayed retry held until its copy goes)
 * must not hold back the acks of those behind it: they count against the prefetch until acked, and
 * the server sends nothing once it is full. So once `every` acks wait behind an open delivery,
 * they go out one frame each (`multiple` off), and a later multiple ack passes over them.
 */
export class AckBatch {
  readonly #channel: Channel;
  readonly #every: number;
  /** Tags from `#done + 1` to `#highest`, by `tag & #mask`: the message (for the ack) and its state. */
  #messages: (ConsumeMessage | undefined)[];
  #states: Uint8Array;
  #mask: number;
  /** Every tag up to this one is settled on the server (acked by a sent ack, or rejected). */
  #done = 0;
  /** Every tag up to this one is settled here: a multiple ack may cover them. */
  #settledTo = 0;
  /** The highest tag handed out. */
  #highest = 0;
  /** The highest acked tag up to `#settledTo`: the one the next multiple ack names, if above `#done`. */
  #ready = 0;
  /** Acked tags above `#settledTo`: held back by an open delivery before them. */
  #heldBack = 0;
  #scheduled = false;
  #closed = false;
  /** Called once every delivery handed over is settled (a consumer draining before its close). */
  #onSettled: (() => void) | undefined;
  readonly #flushLater = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  /** `every`: the acks ready that go out at once (a quarter of the prefetch keeps it refilling). */
  constructor(channel: Channel, every: number) {
    this.#channel = channel;
    this.#every = Math.max(1, every);
    this.#messages = new Array<ConsumeMessage | undefined>(minRing).fill(undefined);
    this.#states = new Uint8Array(minRing);
    this.#mask = minRing - 1;
  }

  /** Records a delivery handed over on the channel (in tag order). */
  delivered(message: ConsumeMessage): void {
    const tag = message.fields.deliveryTag;
    if (!(tag > this.#highest)) {
      throw new RustStreamError(
        "broker-failure",
        `RabbitMQ delivered tag ${tag} after ${this.#highest} on one channel: a channel's delivery tags only go up`,
      );
    }
    if (tag - this.#done > this.#states.length) this.#grow(tag - this.#done);
    // A tag skipped (RabbitMQ numbers every delivery, so none is) holds nothing to ack.
    for (let skipped = this.#highest + 1; skipped < tag; skipped++) {
      this.#states[skipped & this.#mask] = gone;
    }
    this.#messages[tag & this.#mask] = message;
    this.#states[tag & this.#mask] = open;
    this.#highest = tag;
  }

  ack(message: ConsumeMessage): void {
    this.#settle(message.fields.deliveryTag, acked);
  }

  reject(message: ConsumeMessage, requeue: boolean): void {
    this.#channel.reject(message, requeue);
    const tag = message.fields.deliveryTag;
    if (this.#within(tag)) this.#messages[tag & this.#mask] = undefined;
    this.#settle(tag, gone);
  }

  /** Sends the acks ready now: before the consumer is cancelled or its channel closed. */
  flush(): void {
    if (this.#closed || this.#ready <= this.#done) return;
    const message = this.#messages[this.#ready & this.#mask]!;
    try {
      this.#channel.ack(message, true);
    } catch {
      // The channel is closing under us (amqplib refuses to send on it): the server gives back
      // what it has not seen acked, and the consumer's recovery takes it from there.
      this.close();
      return;
    }
    this.#release(this.#settledTo);
  }

  /** The channel closed: nothing more is sent (what was not acked comes back from the server). */
  close(): void {
    this.#closed = true;
    this.#onSettled = undefined;
    this.#messages.fill(undefined);
  }

  /**
   * Calls `settled` once every delivery handed over on the channel is settled here, its acks sent:
   * at once when none is open, never once the channel closed (what was open went back with it).
   * The consumer is cancelled first, so no delivery comes after.
   */
  whenSettled(settled: () => void): void {
    if (this.#closed) return;
    if (this.#settledTo < this.#highest) {
      this.#onSettled = settled;
      return;
    }
    this.flush();
    settled();
  }

  /** Whether `tag` is handed out and not yet settled on the server. */
  #within(tag: number): boolean {
    return tag > this.#done && tag <= this.#highest;
  }

  #settle(tag: number, state: typeof acked | typeof gone): void {
    if (!this.#within(tag) || this.#states[tag & this.#mask] !== open) return;
    this.#states[tag & this.#mask] = state;
    if (tag !== this.#settledTo + 1) {
      if (state === acked && ++this.#heldBack >= this.#every) this.#ackHeldBack();
      return;
    }
    // The front of the window settled: everything settled in a row behind it settles with it, and
    // the ack names the highest of them that waits for one.
    let to = this.#settledTo;
    while (to < this.#highest) {
      const next = this.#states[(to + 1) & this.#mask];
      if (next === open) break;
      to++;
      if (next === acked) {
        this.#ready = to;
        if (to !== tag) this.#heldBack--;
      }
    }
    this.#settledTo = to;
    if (to === this.#highest && this.#onSettled !== undefined) {
      const settled = this.#onSettled;
      this.#onSettled = undefined;
      this.flush();
      settled();
      return;
    }
    if (this.#ready <= this.#done) {
      // Only rejects since the last ack sent: nothing to send, and nothing up to `to` is open.
      this.#release(to);
      return;
    }
    if (this.#ready - this.#done >= this.#every) {
      this.flush();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flushLater);
    }
  }

  /** Sends the acks held back behind an open delivery, one frame each: they are gone then. */
  #ackHeldBack(): void {
    this.#heldBack = 0;
    if (this.#closed) return;
    for (let tag = this.#settledTo + 2; tag <= this.#highest; tag++) {
      const slot = tag & this.#mask;
      if (this.#states[slot] !== acked) continue;
      try {
        this.#channel.ack(this.#messages[slot]!, false);
      } catch {
        // As in flush: the channel is closing, and the server gives back what it saw unacked.
        this.close();
        return;
      }
      this.#states[slot] = gone;
      this.#messages[slot] = undefined;
    }
  }

  /** Everything up to `to` is settled on the server: its slots are let go. */
  #release(to: number): void {
    for (let tag = this.#done + 1; tag <= to; tag++) this.#messages[tag & this.#mask] = undefined;
    this.#done = to;
  }

  /** A ring holding at least `needed` tags, with the window's tags moved to their new slots. */
  #grow(needed: number): void {
    const size = ringSize(needed * 2);
    const messages = new Array<ConsumeMessage | undefined>(size).fill(undefined);
    const states = new Uint8Array(size);
    const mask = size - 1;
    for (let tag = this.#done + 1; tag <= this.#highest; tag++) {
      messages[tag & mask] = this.#messages[tag & this.#mask];
      states[tag & mask] = this.#states[tag & this.#mask]!;
    }
    this.#messages = messages;
    this.#states = states;
    this.#mask = mask;
  }
}

/** The power of two at or above `n` (at least `minRing`): ring slots are found by masking the tag. */
function ringSize(n: number): number {
  let size = minRing;
  while (size < n) size *= 2;
  return size;
}

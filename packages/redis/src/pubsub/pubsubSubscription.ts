import { RustStreamError } from "@ruststream/core";
import { type HostedSubscription, PullSubscription } from "@ruststream/core/broker";
import type { PubSubLink } from "../client/link.js";
import type { RedisBytes } from "../client/resp.js";
import type { RedisHost } from "../host.js";
import type { RedisPubSub, RedisPubSubPattern } from "../sources.js";
import { RedisPubSubDelivery } from "./pubsubDelivery.js";

const none: readonly RedisPubSubDelivery[] = [];

/** Messages a subscriber that falls behind keeps; older ones are dropped, as Pub/Sub is lossy. */
const MAX_BUFFERED = 10_000;

/**
 * A subscription to a channel or a pattern, on its own subscriber connection. Messages wait as they
 * arrived (channel and raw frame) until pulled; a pull decodes them, one by one or in batches.
 */
export class RedisPubSubSubscription
  extends PullSubscription<RedisPubSubDelivery>
  implements HostedSubscription
{
  readonly name: string;
  readonly #host: RedisHost;
  // A queue read from #head, reset once drained (no shift per message). The channel of each message
  // is kept beside it for a pattern only: a named subscription's messages are all on its name.
  readonly #channels: string[] | undefined;
  readonly #messages: RedisBytes[] = [];
  #head = 0;
  #link: PubSubLink | undefined;
  #sequence = 0;
  #waiting: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #dropped = 0;
  /** Every delivery's release, shared: the first settle tells the coordinator it was consumed. */
  readonly #release = (): void => this.#host.coordinator.consumed();

  private constructor(host: RedisHost, name: string, pattern: boolean) {
    super();
    this.#host = host;
    this.name = name;
    this.#channels = pattern ? [] : undefined;
  }

  static async open(
    host: RedisHost,
    source: RedisPubSub | RedisPubSubPattern,
  ): Promise<RedisPubSubSubscription> {
    const pattern = source.copies === "named";
    if (pattern && host.link.cluster?.pubsub === "sharded") {
      throw new RustStreamError(
        "unsupported",
        `RedisPubSubPattern("${source.name}") on a cluster with sharded Pub/Sub: a sharded channel lives on the node of its slot, so no subscription can match a pattern across them; set cluster.pubsub to "classic" on every service of the cluster (classic messages are copied to every node), or subscribe to channels by name`,
      );
    }
    const subscription = new RedisPubSubSubscription(host, source.name, pattern);
    subscription.#link = await host.link.subscriber(source.name, pattern, (channel, message) =>
      subscription.#arrived(channel, message),
    );
    return subscription;
  }

  /** Messages dropped because this subscriber fell more than 10 000 behind. */
  get dropped(): number {
    return this.#dropped;
  }

  assertOpen(): void {
    this.#host.assertOpen();
  }

  async close(): Promise<void> {
    if (!this.markClosed()) return;
    this.#host.forget(this);
    this.#settleWaiting();
    // What arrived and was never pulled is gone with the subscription, as on the server.
    this.#host.coordinator.consumed(this.#clear());
    await this.#link?.close();
  }

  async revoke(error: RustStreamError): Promise<void> {
    this.markRevoked(error);
    this.#settleWaiting();
  }

  async surrender(): Promise<number> {
    this.#host.coordinator.consumed(this.#clear());
    await this.#link?.close();
    return 0;
  }

  /**
   * Waits for one message, then hands it out with those already waiting, at most `max`. Messages of
   * one socket read arrive together, so a waiting pull wakes once they all are buffered.
   */
  protected async pull(max: number): Promise<readonly RedisPubSubDelivery[]> {
    if (this.#head === this.#messages.length) {
      // Woken by the first arrival (or a close, which empties the queue, or a revoke, which rejects).
      await new Promise<void>((resolve, reject) => {
        this.#waiting = { resolve, reject };
      });
    }
    const available = this.#messages.length - this.#head;
    if (available === 0) return none;
    const count = Math.min(max, available);
    const batch = new Array<RedisPubSubDelivery>(count);
    for (let i = 0; i < count; i++) batch[i] = this.#deliverAt(this.#head + i);
    this.#head += count;
    if (this.#head === this.#messages.length) this.#clear();
    return batch;
  }

  #deliverAt(at: number): RedisPubSubDelivery {
    return new RedisPubSubDelivery(
      this.#channels === undefined ? this.name : this.#channels[at]!,
      this.#messages[at]!,
      ++this.#sequence,
      this.#release,
    );
  }

  /** Empties the queue; answers how many messages it held. */
  #clear(): number {
    const held = this.#messages.length - this.#head;
    if (this.#channels !== undefined) this.#channels.length = 0;
    this.#messages.length = 0;
    this.#head = 0;
    return held;
  }

  #settleWaiting(): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting === undefined) return;
    const revoked = this.revokedWith;
    if (revoked !== undefined) waiting.reject(revoked);
    else waiting.resolve();
  }

  #arrived(channel: string, message: RedisBytes): void {
    if (this.closed) {
      this.#host.coordinator.consumed();
      return;
    }
    this.#channels?.push(channel);
    this.#messages.push(message);
    if (this.#messages.length - this.#head > MAX_BUFFERED) {
      // The oldest goes; the slots before #head are reclaimed when the queue drains or compacts.
      this.#head++;
      this.#dropped++;
      this.#host.coordinator.consumed();
      if (this.#head >= MAX_BUFFERED) this.#compact();
    }
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting.resolve();
    }
  }

  /** Drops the slots before #head, so a subscriber that stays behind does not grow the arrays. */
  #compact(): void {
    this.#channels?.splice(0, this.#head);
    this.#messages.splice(0, this.#head);
    this.#head = 0;
  }
}

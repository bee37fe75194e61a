import { RustStreamError, subscriptionIterator } from "@ruststream/core";
import { decodeFrame } from "../frame.js";
import type { HostedSubscription, RedisHost } from "../host.js";
import type { PubSubLink } from "../link/link.js";
import type { RedisPubSub, RedisPubSubPattern } from "../sources.js";
import { RedisPubSubDelivery } from "./pubsubDelivery.js";

const done: IteratorResult<RedisPubSubDelivery, undefined> = { done: true, value: undefined };

/** Messages a subscriber that falls behind keeps; older ones are dropped, as Pub/Sub is lossy. */
const MAX_BUFFERED = 10_000;

/** A subscription to a channel or a pattern, on its own subscriber connection. */
export class RedisPubSubSubscription implements HostedSubscription {
  readonly name: string;
  readonly #host: RedisHost;
  readonly #buffer: Array<{ channel: string; message: Buffer }> = [];
  #link: PubSubLink | undefined;
  #sequence = 0n;
  #closed = false;
  #revoked: RustStreamError | undefined;
  #waiting:
    | {
        resolve: (value: IteratorResult<RedisPubSubDelivery, undefined>) => void;
        reject: (error: Error) => void;
      }
    | undefined;
  #dropped = 0;
  #onForget: (() => void) | undefined;

  private constructor(host: RedisHost, name: string) {
    this.#host = host;
    this.name = name;
  }

  static async open(
    host: RedisHost,
    source: RedisPubSub | RedisPubSubPattern,
    onForget: () => void,
  ): Promise<RedisPubSubSubscription> {
    const subscription = new RedisPubSubSubscription(host, source.name);
    subscription.#onForget = onForget;
    const link = await host.link.pubsub((channel, message) =>
      subscription.#arrived(channel, message),
    );
    subscription.#link = link;
    await link.subscribe(source.name, source.copies === "named");
    return subscription;
  }

  /** Messages dropped because this subscriber fell more than 10 000 behind. */
  get dropped(): number {
    return this.#dropped;
  }

  async next(): Promise<IteratorResult<RedisPubSubDelivery, undefined>> {
    this.#host.assertOpen();
    if (this.#revoked !== undefined) throw this.#revoked;
    if (this.#closed) return done;
    if (this.#waiting !== undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `a second next() on "${this.name}" while one is waiting: pull one at a time`,
      );
    }
    const first = this.#buffer.shift();
    if (first !== undefined)
      return { done: false, value: this.#deliver(first.channel, first.message) };
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onForget?.();
    this.#settleWaiting();
    // What arrived and was never pulled is gone with the subscription, as on the server.
    this.#host.coordinator.consumed(this.#buffer.splice(0).length);
    await this.#link?.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<RedisPubSubDelivery, undefined> {
    return subscriptionIterator(this);
  }

  async revoke(error: RustStreamError): Promise<void> {
    this.#revoked = error;
    this.#closed = true;
    this.#settleWaiting();
  }

  async surrender(): Promise<number> {
    this.#host.coordinator.consumed(this.#buffer.splice(0).length);
    await this.#link?.close();
    return 0;
  }

  #settleWaiting(): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting === undefined) return;
    if (this.#revoked !== undefined) waiting.reject(this.#revoked);
    else waiting.resolve(done);
  }

  #arrived(channel: string, message: Buffer): void {
    if (this.#closed) {
      this.#host.coordinator.consumed();
      return;
    }
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting.resolve({ done: false, value: this.#deliver(channel, message) });
      return;
    }
    this.#buffer.push({ channel, message });
    if (this.#buffer.length > MAX_BUFFERED) {
      this.#buffer.shift();
      this.#dropped++;
      this.#host.coordinator.consumed();
    }
  }

  #deliver(channel: string, message: Buffer): RedisPubSubDelivery {
    this.#sequence++;
    return new RedisPubSubDelivery(channel, decodeFrame(message), this.#sequence, () =>
      this.#host.coordinator.consumed(),
    );
  }
}

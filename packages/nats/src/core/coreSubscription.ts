import { HeaderMap, headerNames, type RustStreamError } from "@ruststream/core";
import { Arrivals, type HostedSubscription, PullSubscription } from "@ruststream/core/broker";
import type { Listener, Received } from "../client/link.js";
import type { NatsHost } from "../host.js";
import { CoreDelivery, type CoreDeliveryOwner } from "./coreDelivery.js";

/**
 * A core NATS subscription: messages arriving while nobody pulls wait in order; a pull takes the
 * oldest (a batch, the oldest few) or waits for one. Core NATS pushes and keeps nothing, so what
 * waits here is lost with the process, as with any core NATS subscriber.
 */
export class CoreSubscription
  extends PullSubscription<CoreDelivery>
  implements CoreDeliveryOwner, HostedSubscription
{
  readonly name: string;
  readonly #host: NatsHost;
  readonly #waiting = new Arrivals<CoreDelivery>();
  /** Counted for the coordinator and not yet released. */
  readonly #counted = new Set<CoreDelivery>();
  readonly #listener: Listener;
  readonly #maxBuffered: number;
  #arrivals = 0n;
  #dropped = 0;
  #unlistened = false;

  constructor(host: NatsHost, subject: string, queue: string | undefined, maxBuffered: number) {
    super();
    this.#host = host;
    this.name = subject;
    this.#maxBuffered = maxBuffered;
    this.#listener = host.link.listen(subject, queue, (message) => this.#arrived(message));
  }

  /** Messages that arrived while `maxBuffered` waited here, dropped (core NATS keeps nothing). */
  get dropped(): number {
    return this.#dropped;
  }

  protected async pull(max: number): Promise<readonly CoreDelivery[]> {
    // Empty when woken by a close.
    if (this.#waiting.length === 0) await this.arrivalOn(this.#waiting);
    return this.#waiting.take(max);
  }

  async close(): Promise<void> {
    this.#closeNow();
  }

  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#waiting.wake();
  }

  /** Answers the messages that had arrived and were never pulled, lost with the subscription. */
  async surrender(): Promise<number> {
    const dropped = this.#waiting.length;
    this.#closeNow();
    return dropped;
  }

  assertOpen(): void {
    this.#host.assertOpen();
  }

  released(delivery: CoreDelivery): void {
    if (this.#counted.delete(delivery)) this.#host.coordinator.consumed();
  }

  #arrived(message: Received): void {
    // A status (a request's "no responders") is the server's, not a message to hand over.
    if (message.status !== undefined || this.closed) return;
    if (this.#waiting.length >= this.#maxBuffered) {
      this.#dropped++;
      return;
    }
    const delivery = new CoreDelivery(this, withReplyTo(message), ++this.#arrivals);
    this.#counted.add(delivery);
    this.#host.coordinator.enqueued();
    this.#waiting.push(delivery);
  }

  #closeNow(): void {
    this.markClosed();
    if (this.#unlistened) return;
    this.#unlistened = true;
    this.#listener.close();
    this.#host.forget(this);
    for (const delivery of this.#waiting.clear()) this.released(delivery);
  }
}

/**
 * A request published by a plain NATS client carries its inbox as the native reply subject only:
 * the runtime answers the `reply-to` header, so it is set from it (as RustStream's crate does),
 * unless the message carries its own.
 */
function withReplyTo(message: Received): Received {
  if (message.reply === undefined || message.headers.has(headerNames.replyTo)) return message;
  const headers = new HeaderMap(message.headers).set(headerNames.replyTo, message.reply);
  return { ...message, headers };
}

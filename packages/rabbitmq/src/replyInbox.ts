import { type Clock, headerNames, type RawMessage, type RustStreamError } from "@ruststream/core";
import { type PendingReply, ReplyWaiters } from "@ruststream/core/broker";
import { headersOf } from "./amqpHeaders.js";
import type { Link, LinkDelivery } from "./link.js";
import { rabbitHeaderNames } from "./names.js";

/**
 * Where a connection's requests wait for their replies: direct reply-to, no queue at all. The
 * publishing channel consumes `amq.rabbitmq.reply-to`, each request goes out on it with that as
 * `reply-to` (the server writes the channel's own address there), and each reply comes back on
 * it; many requests wait at once, each matched by its correlation id.
 */
export class ReplyInbox {
  readonly #link: Link;
  readonly #waiters: ReplyWaiters;
  #listening = false;

  constructor(link: Link, clock: Clock) {
    this.#link = link;
    this.#waiters = new ReplyWaiters(clock, "queue");
  }

  awaitReply(correlationId: string, timeoutMs: number): PendingReply {
    if (!this.#listening) {
      this.#listening = true;
      this.#link.onReply((reply) => this.#replied(reply));
    }
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    return { inbox: this.#link.replyTo, reply: wait.reply, cancel: wait.cancel };
  }

  stop(error: RustStreamError): void {
    this.#waiters.rejectAll(error);
  }

  #replied(reply: LinkDelivery): void {
    // A header nested past the limit is left out: the reply still reaches its request.
    const { headers } = headersOf(reply.properties);
    const raw: RawMessage = {
      name: reply.routingKey,
      payload: reply.content,
      headers,
      partitionKey: headers.get(rabbitHeaderNames.partitionKey),
    };
    // A late or stray reply finds nobody waiting and is dropped.
    this.#waiters.resolve(headers.getString(headerNames.correlationId), raw);
  }
}

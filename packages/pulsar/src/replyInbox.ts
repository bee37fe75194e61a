import { randomUUID } from "node:crypto";
import { type Clock, HeaderMap, headerNames, type RustStreamError } from "@ruststream/core";
import { type PendingReply, ReplyWaiters } from "@ruststream/core/broker";
import type { Link, LinkConsumer } from "./link/link.js";

/**
 * One reply topic per connection, read only by it: `non-persistent://public/default/ruststream-
 * inbox-<uuid>` (kept in memory by the broker, gone once unused), subscribed before the first
 * request goes out, so a responder answers with an ordinary publish to `reply-to`.
 */
export class ReplyInbox {
  readonly topic: string;
  readonly #link: Link;
  readonly #waiters: ReplyWaiters;
  #consumer: Promise<LinkConsumer> | undefined;
  #stopped = false;

  constructor(link: Link, clock: Clock, namespace: string) {
    this.#link = link;
    this.topic = `non-persistent://${namespace}/ruststream-inbox-${randomUUID()}`;
    this.#waiters = new ReplyWaiters(clock, "topic");
  }

  async awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    await this.#listen();
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    return { inbox: this.topic, reply: wait.reply, cancel: wait.cancel };
  }

  async stop(error: RustStreamError): Promise<void> {
    this.#stopped = true;
    this.#waiters.rejectAll(error);
    const consumer = await this.#consumer?.catch(() => undefined);
    await consumer?.close().catch(() => undefined);
  }

  #listen(): Promise<LinkConsumer> {
    if (this.#consumer !== undefined) return this.#consumer;
    const opening = this.#link.subscribe({
      topic: this.topic,
      subscription: "inbox",
      subscriptionType: "Exclusive",
      durable: false,
    });
    this.#consumer = opening;
    opening.then(
      (consumer) => {
        consumer.listen(() => this.#drain(consumer));
        this.#drain(consumer);
      },
      () => {
        this.#consumer = undefined;
      },
    );
    return opening;
  }

  #drain(consumer: LinkConsumer): void {
    for (;;) {
      let message: ReturnType<LinkConsumer["tryReceive"]>;
      try {
        message = consumer.tryReceive();
      } catch {
        return; // closed at shutdown, or failed: the waiting requests time out
      }
      if (message === undefined || this.#stopped) return;
      consumer.ack(message);
      const headers = new HeaderMap();
      for (const [name, value] of message.properties) headers.set(name, value);
      // A late or stray reply finds nobody waiting and is dropped.
      this.#waiters.resolve(headers.getString(headerNames.correlationId), {
        name: this.topic,
        payload: message.payload,
        headers,
        partitionKey: message.key === undefined ? undefined : new TextEncoder().encode(message.key),
      });
    }
  }
}

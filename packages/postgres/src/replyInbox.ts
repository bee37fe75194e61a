import { randomUUID } from "node:crypto";
import { headerNames, type RustStreamError } from "@ruststream/core";
import { type PendingReply, ReplyWaiters } from "@ruststream/core/broker";
import type { PostgresQueueDelivery } from "./queue/queueDelivery.js";
import { PostgresQueueSubscription, type QueueHost } from "./queue/queueSubscription.js";
import { PostgresQueue } from "./sources.js";

/** Replies one claim takes at most. */
const claim = 64;

/**
 * The reply inbox of one connection: a queue of the table that only this connection claims,
 * `ruststream.inbox.<uuid>`, so a responder answers with an ordinary publish to `reply-to` (in its
 * claim's transaction when its handler is transactional, so the reply exists only if the handler's
 * work commits). It is read through the queue's own subscription (claims, leases, the wake-ups of
 * the connection's LISTEN), from the first request on; each reply is acked once it is handed to its
 * waiter, and one nobody waits for (late, or stray) is acked and dropped. Its rows are deleted at
 * shutdown; a process that dies leaves its inbox's unread replies in the table.
 */
export class PostgresReplyInbox {
  /** The inbox's queue: `reply-to` of every request of the connection. */
  readonly name = `ruststream.inbox.${randomUUID()}`;
  readonly #host: QueueHost;
  readonly #waiters: ReplyWaiters;
  #reader: PostgresQueueSubscription | undefined;
  #reading: Promise<void> | undefined;
  #stopped = false;

  constructor(host: QueueHost) {
    this.#host = host;
    this.#waiters = new ReplyWaiters(host.clock, "queue");
  }

  awaitReply(correlationId: string, timeoutMs: number): PendingReply {
    this.#host.assertOpen();
    this.#listen();
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    return { inbox: this.name, reply: wait.reply, cancel: wait.cancel };
  }

  /** Fails every waiting request, stops reading and deletes the inbox's rows, at shutdown. */
  async stop(error: RustStreamError): Promise<void> {
    this.#stopped = true;
    this.#waiters.rejectAll(error);
    const reader = this.#reader;
    if (reader === undefined) return;
    this.#reader = undefined;
    await reader.surrender();
    await this.#reading;
    await this.#host.store.purgeQueue(this.name).catch(() => undefined);
  }

  #listen(): void {
    if (this.#reader !== undefined) return;
    const reader = new PostgresQueueSubscription(
      this.#host,
      // Replies have no order to keep between keys: the plain claim.
      new PostgresQueue(this.name, { claim, keyOrder: false }),
    );
    this.#reader = reader;
    this.#reading = this.#read(reader);
  }

  async #read(reader: PostgresQueueSubscription): Promise<void> {
    for (;;) {
      let replies: readonly PostgresQueueDelivery[];
      try {
        replies = await reader.nextBatch(claim);
      } catch (error) {
        // A claim the server refused for good (it retries a server that is away by itself): the
        // requests waiting now fail with its reason, and the next request opens a new reader.
        if (this.#stopped) return;
        this.#waiters.rejectAll(error as Error);
        if (this.#reader === reader) this.#reader = undefined;
        await reader.surrender().catch(() => undefined);
        return;
      }
      // Closed at shutdown: nothing more to read.
      if (replies.length === 0) return;
      for (const reply of replies) {
        this.#waiters.resolve(reply.headers.getString(headerNames.correlationId), {
          name: this.name,
          payload: reply.payload,
          headers: reply.headers,
          partitionKey: reply.partitionKey,
        });
        // A failed ack leaves the row to the next claim once its lease ends: the waiter it
        // finds then is gone, and the copy is acked and dropped.
        void Promise.resolve(reply.ack()).catch(() => undefined);
      }
    }
  }
}

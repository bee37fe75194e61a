import { randomUUID } from "node:crypto";
import type { Clock } from "../clock.js";
import type { RustStreamError } from "../errors.js";
import { headerNames } from "../headerNames.js";
import { type PendingReply, ReplyWaiters } from "../replyWaiters.js";
import type { MemorySubscription } from "./memorySubscription.js";

/**
 * One reply inbox per connection: a private topic only this connection reads, opened at the first
 * request, so a responder answers with an ordinary publish to `reply-to`. Its subscription is the
 * connection's own, never adopted (so never counted among the app's at shutdown): `stop` closes it.
 */
export class MemoryReplyInbox {
  readonly name = `_inbox.${randomUUID()}`;
  readonly #waiters: ReplyWaiters;
  /** Opens a subscription of the connection's to a topic (the inbox's, here). */
  readonly #open: (topic: string) => MemorySubscription;
  #subscription: MemorySubscription | undefined;

  constructor(clock: Clock, open: (topic: string) => MemorySubscription) {
    this.#waiters = new ReplyWaiters(clock, "topic");
    this.#open = open;
  }

  awaitReply(correlationId: string, timeoutMs: number): PendingReply {
    this.#listen();
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    return { inbox: this.name, reply: wait.reply, cancel: wait.cancel };
  }

  /** Ends the reader (its replies were acked as they came) and fails every waiting request. */
  async stop(error: RustStreamError): Promise<void> {
    await this.#subscription?.close();
    this.#waiters.rejectAll(error);
  }

  // One inbox subscription per connection serves every request made through it.
  #listen(): void {
    if (this.#subscription !== undefined) return;
    const inbox = this.#open(this.name);
    this.#subscription = inbox;
    const loop = async () => {
      for (;;) {
        const next = await inbox.next();
        if (next.done) return;
        const reply = next.value;
        reply.ack();
        // A late or stray reply finds nobody waiting and is dropped.
        this.#waiters.resolve(reply.headers.getString(headerNames.correlationId), {
          name: reply.name,
          payload: reply.payload,
          headers: reply.headers,
          partitionKey: reply.partitionKey,
        });
      }
    };
    loop().catch(() => {
      // A pull rejected at shutdown; every waiting request is rejected by stop().
    });
  }
}

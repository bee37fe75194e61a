import { type Clock, RustStreamError } from "@ruststream/core";
import { type PendingReply, ReplyWaiters } from "@ruststream/core/broker";
import type { Listener, NatsLink } from "./client/link.js";

/**
 * One reply inbox per connection: a wildcard subscription to `<inbox>.*`, each request's reply
 * subject `<inbox>.<correlation id>`, so a reply finds its request by its subject (a plain NATS
 * responder answers there too) and the server's "no responders" status, sent to that subject at
 * once, fails its request at once instead of after the timeout.
 */
export class ReplyInbox {
  readonly #link: NatsLink;
  readonly #prefix: string;
  readonly #waiters: ReplyWaiters;
  /** A request's own rejection, for the server's "no responders". */
  readonly #noResponders = new Map<string, (error: Error) => void>();
  #listener: Listener | undefined;

  constructor(link: NatsLink, clock: Clock) {
    this.#link = link;
    this.#prefix = link.inbox();
    this.#waiters = new ReplyWaiters(clock, "subject");
  }

  awaitReply(correlationId: string, timeoutMs: number): PendingReply {
    this.#listener ??= this.#link.listen(`${this.#prefix}.*`, undefined, (message) => {
      const id = message.subject.slice(this.#prefix.length + 1);
      if (message.status === 503) {
        this.#noResponders.get(id)?.(
          new RustStreamError(
            "broker-failure",
            "no responders: nothing is subscribed to the request's subject (the server answered at once)",
          ),
        );
        return;
      }
      this.#waiters.resolve(id, {
        name: message.subject,
        payload: message.payload,
        headers: message.headers,
        partitionKey: undefined,
      });
    });
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    const refused = new Promise<never>((_, reject) => {
      this.#noResponders.set(correlationId, (error) => {
        wait.cancel();
        reject(error);
      });
    });
    refused.catch(() => {});
    const forget = () => this.#noResponders.delete(correlationId);
    const reply = Promise.race([wait.reply, refused]).finally(forget);
    reply.catch(() => {});
    return {
      inbox: `${this.#prefix}.${correlationId}`,
      reply,
      cancel: () => {
        forget();
        wait.cancel();
      },
    };
  }

  stop(error: RustStreamError): void {
    this.#waiters.rejectAll(error);
    for (const reject of this.#noResponders.values()) reject(error);
    this.#noResponders.clear();
    this.#listener?.close();
    this.#listener = undefined;
  }
}

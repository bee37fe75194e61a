import { randomUUID } from "node:crypto";
import type { RequestOptions } from "./capabilities.js";
import type { Clock } from "./clock.js";
import { RustStreamError } from "./errors.js";
import { HeaderMap } from "./headerMap.js";
import { headerNames } from "./headerNames.js";
import type { OutgoingMessage, RawMessage } from "./message.js";

/** One request's wait for its reply. */
export interface ReplyWait {
  readonly reply: Promise<RawMessage>;
  /** Stops waiting, when the request itself could not be published. */
  cancel(): void;
}

interface Waiter {
  resolve(reply: RawMessage): void;
  reject(error: Error): void;
  /** Waits `timeoutMs` again, from now: a partial reply came. */
  rearm(): void;
  cancel(): void;
}

/**
 * The listeners of requests that take several replies, by correlation id. `publishRequest` mints
 * the id and registers its request's listener; every broker's inbox hands replies to
 * {@link ReplyWaiters.resolve}; the two meet through the id alone (a random UUID), so no broker's
 * inbox has to carry the listener between them.
 *
 * At module level, shared by every app in the process, because `publishRequest` reaches a
 * connection's `ReplyWaiters` only through the broker's `awaitReply(correlationId)`, which each
 * broker passes through its host and its inbox: a listener kept per instance would widen that path
 * in every broker. Sharing it lets no app reach another's listener: `resolve` looks one up only for
 * a correlation id its own instance waits for, each request mints a fresh random one, and
 * `publishRequest` removes its entry when the request ends (test/replyWaiters.test.ts: the
 * connections of two apps in one process).
 */
const partialListeners = new Map<string, (reply: RawMessage) => void>();

/**
 * The requests of one connection waiting for their replies, by correlation id: what every broker's
 * request/reply keeps, whatever its inbox is. A broker reads replies from its inbox and hands each
 * one to {@link ReplyWaiters.resolve}; a reply nobody waits for (late, or stray) is dropped.
 */
export class ReplyWaiters {
  readonly #clock: Clock;
  readonly #where: string;
  readonly #waiters = new Map<string, Waiter>();

  /** `where` names what a request is published to, for the timeout's message ("topic", "stream"). */
  constructor(clock: Clock, where: string) {
    this.#clock = clock;
    this.#where = where;
  }

  /**
   * Waits for the reply carrying `correlationId`; rejects with code `timeout` after `timeoutMs`
   * (counted again from each partial reply, for a request that takes several).
   */
  wait(correlationId: string, timeoutMs: number): ReplyWait {
    let waiter: Waiter | undefined;
    const reply = new Promise<RawMessage>((resolve, reject) => {
      const expire = () => {
        this.#waiters.delete(correlationId);
        reject(
          new RustStreamError(
            "timeout",
            `no reply within ${timeoutMs} ms: is a handler subscribed to the request's ${this.#where}, and does it reply to reply-to?`,
          ),
        );
      };
      let timer = this.#clock.setTimer(timeoutMs, expire);
      waiter = {
        resolve: (message) => {
          timer.cancel();
          resolve(message);
        },
        reject: (error) => {
          timer.cancel();
          reject(error);
        },
        rearm: () => {
          timer.cancel();
          timer = this.#clock.setTimer(timeoutMs, expire);
        },
        cancel: () => timer.cancel(),
      };
    });
    // Shutdown may reject this before the requester awaits it (while its request is still being
    // published); the requester still sees the rejection, but it is never reported as unhandled.
    reply.catch(() => {});
    this.#waiters.set(correlationId, waiter!);
    return {
      reply,
      cancel: () => {
        this.#waiters.delete(correlationId);
        waiter!.cancel();
      },
    };
  }

  /**
   * Hands a reply to its request; false when nobody waits for it. A reply marked
   * `x-ruststream-more-replies` to a request that takes several goes to its listener, and the
   * request waits on for the last; a listener that throws fails the request with its error.
   */
  resolve(correlationId: string | undefined, reply: RawMessage): boolean {
    const waiter = correlationId === undefined ? undefined : this.#waiters.get(correlationId);
    if (correlationId === undefined || waiter === undefined) return false;
    const partial = partialListeners.get(correlationId);
    if (partial !== undefined && reply.headers.getString(headerNames.moreReplies) !== undefined) {
      try {
        partial(reply);
        waiter.rearm();
      } catch (error) {
        this.#waiters.delete(correlationId);
        waiter.reject(error instanceof Error ? error : new Error(String(error)));
      }
      return true;
    }
    this.#waiters.delete(correlationId);
    waiter.resolve(reply);
    return true;
  }

  /** Rejects every waiting request, at shutdown. */
  rejectAll(error: Error): void {
    for (const waiter of this.#waiters.values()) waiter.reject(error);
    this.#waiters.clear();
  }
}

/** A request's wait, with the inbox its reply is to be published to. */
export interface PendingReply extends ReplyWait {
  readonly inbox: string;
}

/**
 * The request half every `Requester` shares: a fresh `correlation-id`, the connection's inbox as
 * `reply-to` (on a copy of the caller's headers), the publish, then the reply; a publish that fails
 * stops the wait, so no timer outlives it. With `options.onPartial` the request takes several
 * replies (see `RequestOptions`): the brokers pass their `request`'s options on.
 */
export async function publishRequest<TOptions>(
  message: OutgoingMessage<TOptions>,
  awaitReply: (correlationId: string) => PendingReply | Promise<PendingReply>,
  publish: (message: OutgoingMessage<TOptions>) => Promise<unknown>,
  options?: RequestOptions,
): Promise<RawMessage> {
  const correlationId = randomUUID();
  const onPartial = options?.onPartial;
  if (onPartial !== undefined) partialListeners.set(correlationId, onPartial);
  try {
    const pending = await awaitReply(correlationId);
    const headers = message.headers?.clone() ?? new HeaderMap();
    headers.set(headerNames.replyTo, pending.inbox).set(headerNames.correlationId, correlationId);
    if (onPartial !== undefined) headers.set(headerNames.replyStream, "1");
    try {
      await publish({ ...message, headers });
    } catch (error) {
      pending.cancel();
      throw error;
    }
    return await pending.reply;
  } finally {
    partialListeners.delete(correlationId);
  }
}

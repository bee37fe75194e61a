import { RustStreamError } from "../errors.js";
import type { BatchContext, HandlerContext } from "./context.js";
import { isOutDeclaration, type OutDeclarations } from "./out.js";
import type { Outcome } from "./outcome.js";
import type { Reply } from "./reply.js";
import type { ErasedKey, FailurePolicy, KeyOf, SubscriberSpec } from "./subscriberSpec.js";

type Awaitable<T> = T | PromiseLike<T>;

/**
 * A handler: the decoded message and its context in, a reply (where `.reply()` was declared), an
 * {@link Outcome}, or nothing (ack) out.
 */
export type Handler<TMessage, TReply, TOut, TOptions = never> = (
  message: TMessage,
  ctx: HandlerContext<TOut, TOptions>,
) => Awaitable<
  // biome-ignore lint/suspicious/noConfusingVoidType: so that `async () => {}` counts as "ack".
  TReply | Reply<TReply, TOptions> | Outcome | undefined | void
>;

/**
 * A batch handler: one outcome (or nothing, ack) for the whole batch, or one outcome per message in
 * the same order.
 */
export type BatchHandler<TMessage, TOut, TOptions = never> = (
  messages: readonly TMessage[],
  ctx: BatchContext<TOut, TOptions>,
) => Awaitable<
  // biome-ignore lint/suspicious/noConfusingVoidType: so that `async () => {}` counts as "ack".
  Outcome | readonly Outcome[] | undefined | void
>;

function positiveInteger(what: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}(${value}): give a whole number, 1 or more`,
    );
  }
  return value;
}

function nonEmpty(what: string, value: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new RustStreamError("invalid-argument", `${what}() needs a non-empty destination name`);
  }
  return value;
}

/**
 * Declares one subscriber; finish it with `.handle(fn)`. Each setting may be given once, in any
 * order, before `handle`. `TOptions` is the broker's per-message publish settings, which replies and
 * `ctx.out` publishes may carry.
 */
export class SubscriberBuilder<
  TMessage,
  TReply = never,
  TOut extends OutDeclarations = Record<never, never>,
  TOptions = never,
> {
  readonly #spec: SubscriberSpec;

  /** @internal Built by `BrokerScope.subscriber`. */
  constructor(spec: SubscriberSpec) {
    this.#spec = spec;
  }

  /** The name events, logs and `TestApp.subscriber()` use (default: the source's name). */
  name(name: string): this {
    this.#spec.name = nonEmpty("name", name);
    return this;
  }

  /**
   * What the handler returns (other than an outcome) is published as the reply: to `destination`,
   * or without one to the message's `reply-to` (request/reply). It carries the message's
   * `correlation-id`. A reply that fails to publish retries the delivery.
   */
  reply<TReplyValue = unknown>(
    destination?: string,
  ): SubscriberBuilder<TMessage, TReplyValue, TOut, TOptions> {
    this.#spec.reply = {
      destination: destination === undefined ? undefined : nonEmpty("reply", destination),
    };
    return this as unknown as SubscriberBuilder<TMessage, TReplyValue, TOut, TOptions>;
  }

  /**
   * Publishers the handler gets as `ctx.out`: `{ audit: "audit-log" }` or, typed,
   * `{ audit: out<AuditEvent>("audit-log") }`.
   */
  publishes<D extends OutDeclarations>(outs: D): SubscriberBuilder<TMessage, TReply, D, TOptions> {
    const resolved: Record<string, { name: string; codec: undefined }> = {};
    for (const [key, declaration] of Object.entries(outs)) {
      if (typeof declaration === "string") {
        resolved[key] = { name: nonEmpty("publishes", declaration), codec: undefined };
      } else if (isOutDeclaration(declaration)) {
        resolved[key] = declaration as { name: string; codec: undefined };
      } else {
        throw new RustStreamError(
          "invalid-argument",
          `publishes({ ${key} }): give a destination name or out(name)`,
        );
      }
    }
    this.#spec.outs = resolved;
    return this as unknown as SubscriberBuilder<TMessage, TReply, D, TOptions>;
  }

  /**
   * Runs up to `n` handlers at once. With `key`, messages go to `n` sequential lanes by key, so
   * messages with one key are handled in order: `"partitionKey"` uses the key each message was
   * published with (a source that cannot carry one is refused at startup), `"partition"` the broker
   * partition a delivery came from (refused on a source without partitions), and a function
   * computes a key from the message.
   */
  workers(n: number, options: { readonly key?: KeyOf<TMessage> } = {}): this {
    const key: unknown = options.key;
    if (
      key !== undefined &&
      typeof key !== "function" &&
      key !== "partitionKey" &&
      key !== "partition"
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `workers(${n}, { key: ${JSON.stringify(key)} }): give "partitionKey", "partition" or a function of the message`,
      );
    }
    this.#spec.workers = positiveInteger("workers", n);
    this.#spec.key = options.key as ErasedKey | undefined;
    return this;
  }

  /**
   * Deliveries one message gets, the first included, before it is given up on (default 3): it then
   * goes to the dead letter if one is declared, else it is dropped.
   */
  maxAttempts(n: number): this {
    this.#spec.maxAttempts = positiveInteger("maxAttempts", n);
    return this;
  }

  /**
   * Where a message goes, as it arrived, when it is given up on or fails to decode, with its origin
   * (source, position, reason) stamped by the broker's names.
   */
  deadLetter(destination: string): this {
    this.#spec.deadLetter = nonEmpty("deadLetter", destination);
    return this;
  }

  /** Overrides the failure defaults. */
  onFailure(policy: FailurePolicy): this {
    const { initialMs = 100, maxMs = 10_000 } = policy.backoff ?? {};
    if (!(initialMs >= 0 && maxMs >= initialMs && Number.isFinite(maxMs))) {
      throw new RustStreamError(
        "invalid-argument",
        `onFailure backoff { initialMs: ${initialMs}, maxMs: ${maxMs} }: give 0 <= initialMs <= maxMs, both finite`,
      );
    }
    this.#spec.failure = policy;
    return this;
  }

  /**
   * Deliveries pulled ahead of the handler (default 256). Pulling in batches is what keeps dispatch
   * cheap; a smaller number leaves more messages to competing consumers.
   */
  prefetch(n: number): this {
    this.#spec.prefetch = positiveInteger("prefetch", n);
    return this;
  }

  /** The handler gets up to `n` messages at once (what the broker has waiting, after the first). */
  batch(n: number): BatchSubscriberBuilder<TMessage, TOut, TOptions> {
    if (this.#spec.reply !== undefined) {
      throw new RustStreamError(
        "invalid-argument",
        "batch() after reply(): a batch handler has no replies; publish through .publishes({ ... }) instead",
      );
    }
    this.#spec.batch = positiveInteger("batch", n);
    return new BatchSubscriberBuilder(this.#spec);
  }

  /** Mounts the handler. */
  handle(handler: Handler<TMessage, TReply, TOut, TOptions>): void {
    if (this.#spec.handler !== undefined) {
      throw new RustStreamError(
        "invalid-argument",
        "handle() was already called on this subscriber",
      );
    }
    this.#spec.handler = handler as SubscriberSpec["handler"];
  }
}

/** A subscriber whose handler takes batches; see {@link SubscriberBuilder.batch}. */
export class BatchSubscriberBuilder<TMessage, TOut extends OutDeclarations, TOptions = never> {
  readonly #spec: SubscriberSpec;

  /** @internal */
  constructor(spec: SubscriberSpec) {
    this.#spec = spec;
  }

  /** Mounts the batch handler. */
  handle(handler: BatchHandler<TMessage, TOut, TOptions>): void {
    if (this.#spec.handler !== undefined) {
      throw new RustStreamError(
        "invalid-argument",
        "handle() was already called on this subscriber",
      );
    }
    this.#spec.handler = handler as SubscriberSpec["handler"];
  }
}

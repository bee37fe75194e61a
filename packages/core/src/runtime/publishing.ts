import { supportsRequest } from "../capabilities.js";
import type { Codec } from "../codec/codec.js";
import type { Delivery } from "../delivery.js";
import { RustStreamError } from "../errors.js";
import { HeaderMap } from "../headerMap.js";
import { headerNames } from "../headerNames.js";
import type { OutgoingMessage, RawMessage, Receipt } from "../message.js";
import type { Publisher } from "../publisher.js";
import type { Observer, PublishPurpose } from "./events.js";
import type { PublishInfo, PublishMiddleware } from "./middleware.js";
import type { OutPublisher, PublishOptions, RequestOptions } from "./out.js";

/** Where a publish goes: a connected broker's publisher, that broker's kind and its label. */
export interface PublishRoute {
  readonly publisher: Publisher<never>;
  /** The broker's kind (`"kafka"`), as `PublishInfo.broker` tells publish middleware. */
  readonly broker: string;
  /** Which of the app's brokers (`"redis"`, `"redis-2"`), as its `broker-connection` event names it. */
  readonly label: string;
}

function unsupportedRequest(name: string): RustStreamError {
  return new RustStreamError(
    "unsupported",
    `request() to "${name}": this broker has no request/reply; publish and subscribe to a reply topic instead`,
  );
}

/**
 * Every publish and request of a running app goes through here: middleware, then the broker, then
 * an event.
 */
export class PublishPipeline {
  readonly #middleware: readonly PublishMiddleware[];
  readonly #emit: Observer | undefined;

  constructor(middleware: readonly PublishMiddleware[], emit: Observer | undefined) {
    this.#middleware = middleware;
    this.#emit = emit;
  }

  publish(
    route: PublishRoute,
    message: OutgoingMessage,
    purpose: PublishPurpose,
  ): Promise<Receipt> {
    const publisher = route.publisher;
    if (this.#emit === undefined && this.#middleware.length === 0) {
      try {
        return publisher.publish(message);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.#run(route, message, purpose, (m) => publisher.publish(m));
  }

  /**
   * Sends a request through the same middleware as a publish (purpose `"request"`), so what they add
   * (a trace context, a header) reaches the request too; resolves with the reply. Rejects with
   * `unsupported` on a broker without request/reply.
   */
  async request(
    route: PublishRoute,
    message: OutgoingMessage,
    timeoutMs: number,
    onPartial?: (reply: RawMessage) => void,
  ): Promise<RawMessage> {
    const publisher = route.publisher;
    if (!supportsRequest(publisher)) throw unsupportedRequest(message.name);
    let reply: RawMessage | undefined;
    const options = onPartial === undefined ? { timeoutMs } : { timeoutMs, onPartial };
    // Middleware speaks in receipts; a request's is the destination, its reply kept aside.
    await this.#run(route, message, "request", async (m) => {
      reply = await publisher.request(m, options);
      return { name: m.name };
    });
    return reply as RawMessage;
  }

  #run(
    route: PublishRoute,
    message: OutgoingMessage,
    purpose: PublishPurpose,
    deliver: (message: OutgoingMessage) => Promise<Receipt>,
  ): Promise<Receipt> {
    const emit = this.#emit;
    let final = message;
    const send =
      emit === undefined
        ? deliver
        : (m: OutgoingMessage) => {
            final = m;
            return deliver(m);
          };
    let sent: Promise<Receipt>;
    try {
      sent =
        this.#middleware.length === 0
          ? send(message)
          : this.#through(0, send, message, { broker: route.broker, purpose });
    } catch (error) {
      // A middleware or a publisher that throws instead of rejecting still fails only this publish.
      sent = Promise.reject(error);
    }
    if (emit !== undefined) {
      const broker = route.label;
      sent.then(
        () =>
          emit({ type: "publish", name: final.name, broker, message: final, purpose, ok: true }),
        (error: unknown) =>
          emit({
            type: "publish",
            name: final.name,
            broker,
            message: final,
            purpose,
            ok: false,
            error,
          }),
      );
    }
    return sent;
  }

  #through(
    index: number,
    send: (message: OutgoingMessage) => Promise<Receipt>,
    message: OutgoingMessage,
    info: PublishInfo,
  ): Promise<Receipt> {
    const layer = this.#middleware[index];
    if (layer === undefined) return send(message);
    return layer(message, (next) => this.#through(index + 1, send, next, info), info);
  }
}

/** Headers of a message the runtime encodes: the codec's content type, then the caller's. */
export function encodedHeaders(
  codec: { readonly contentType: string },
  extra: PublishOptions<unknown>["headers"],
): HeaderMap {
  const headers = new HeaderMap();
  headers.set(headerNames.contentType, codec.contentType);
  if (extra !== undefined)
    for (const [name, value] of new HeaderMap(extra)) headers.set(name, value);
  return headers;
}

/**
 * Carries a delivery's trace context (`traceparent`, `tracestate`) onto what is published because
 * of it, unless the caller set its own: a reply or a `ctx.out` publish stays in the delivery's trace.
 */
export function carryTraceContext(headers: HeaderMap, cause: Delivery): HeaderMap {
  // Unrolled, not a loop over the two names: this runs for every reply.
  carryHeader(headers, cause, headerNames.traceparent);
  carryHeader(headers, cause, headerNames.tracestate);
  return headers;
}

function carryHeader(headers: HeaderMap, cause: Delivery, name: string): void {
  // The delivery first: most carry no trace context, and an empty map answers without a lookup.
  const value = cause.headers.get(name);
  if (value !== undefined && !headers.has(name)) headers.set(name, value);
}

/** The message the runtime publishes for one encoded value, on behalf of `cause` if any. */
export function runtimeMessage(
  name: string,
  payload: Uint8Array,
  headers: HeaderMap,
  options: PublishOptions<unknown>,
  cause: Delivery | undefined,
): OutgoingMessage<unknown> {
  // Assigned field by field rather than spread: one object per reply, and absent fields stay absent.
  const message: {
    name: string;
    payload: Uint8Array;
    headers: HeaderMap;
    partitionKey?: Uint8Array | string;
    options?: unknown;
    cause?: Delivery;
  } = { name, payload, headers: cause === undefined ? headers : carryTraceContext(headers, cause) };
  if (options.partitionKey !== undefined) message.partitionKey = options.partitionKey;
  if (options.options !== undefined) message.options = options.options;
  if (cause !== undefined) message.cause = cause;
  return message;
}

/**
 * The publisher behind one `.publishes({ ... })` entry; each handler's context binds it to its
 * delivery (`bind`), a batch's context uses it with no cause.
 */
export class OutPublisherBase implements OutPublisher<unknown, unknown> {
  readonly name: string;
  readonly #codec: Codec<unknown>;
  readonly #route: PublishRoute;
  readonly #pipeline: PublishPipeline;

  constructor(name: string, codec: Codec<unknown>, route: PublishRoute, pipeline: PublishPipeline) {
    this.name = name;
    this.#codec = codec;
    this.#route = route;
    this.#pipeline = pipeline;
  }

  publish(value: unknown, options?: PublishOptions<unknown>): Promise<Receipt> {
    return this.publishFor(undefined, value, options);
  }

  request(value: unknown, options: RequestOptions<unknown>): Promise<unknown> {
    return this.requestFor(undefined, value, options);
  }

  /** A publisher of the same entry whose messages name `cause`. */
  bind(cause: Delivery): OutPublisher<unknown, unknown> {
    return {
      name: this.name,
      publish: (value, options) => this.publishFor(cause, value, options),
      request: (value, options) => this.requestFor(cause, value, options),
    };
  }

  async publishFor(
    cause: Delivery | undefined,
    value: unknown,
    options: PublishOptions<unknown> = {},
  ): Promise<Receipt> {
    return this.#pipeline.publish(this.#route, this.#message(cause, value, options), "out");
  }

  async requestFor(
    cause: Delivery | undefined,
    value: unknown,
    options: RequestOptions<unknown>,
  ): Promise<unknown> {
    const message = this.#message(cause, value, options);
    const reply = await this.#pipeline.request(
      this.#route,
      message,
      options.timeoutMs,
      decodedPartials(this.#codec, options),
    );
    return this.#codec.decode(reply.payload);
  }

  #message(
    cause: Delivery | undefined,
    value: unknown,
    options: PublishOptions<unknown>,
  ): OutgoingMessage {
    const codec = this.#codec;
    const headers = encodedHeaders(codec, options.headers);
    // Erased here: the options' type was checked where the handler was typed against its broker.
    return runtimeMessage(
      this.name,
      codec.encode(value),
      headers,
      options,
      cause,
    ) as OutgoingMessage;
  }
}

/** The broker's listener for a request's partial replies: each decoded for `onPartialReply`. */
export function decodedPartials(
  codec: Codec<unknown>,
  options: RequestOptions<unknown>,
): ((reply: RawMessage) => void) | undefined {
  const listener = options.onPartialReply;
  return listener === undefined ? undefined : (reply) => listener(codec.decode(reply.payload));
}

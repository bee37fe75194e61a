import { supportsRequest } from "../capabilities.js";
import type { Codec } from "../codec/codec.js";
import { RustStreamError } from "../errors.js";
import { HeaderMap } from "../headerMap.js";
import { headerNames } from "../headerNames.js";
import type { OutgoingMessage, Receipt } from "../message.js";
import type { Publisher } from "../publisher.js";
import type { Observer, PublishPurpose } from "./events.js";
import type { PublishMiddleware } from "./middleware.js";
import type { OutPublisher, PublishOptions, RequestOptions } from "./out.js";

/** Every publish of a running app goes through here: middleware, then the broker, then an event. */
export class PublishPipeline {
  readonly #middleware: readonly PublishMiddleware[];
  readonly #emit: Observer | undefined;

  constructor(middleware: readonly PublishMiddleware[], emit: Observer | undefined) {
    this.#middleware = middleware;
    this.#emit = emit;
  }

  publish(
    publisher: Publisher<never>,
    message: OutgoingMessage,
    purpose: PublishPurpose,
  ): Promise<Receipt> {
    const emit = this.#emit;
    if (emit === undefined && this.#middleware.length === 0) {
      try {
        return publisher.publish(message);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    let final = message;
    const send =
      emit === undefined
        ? (m: OutgoingMessage) => publisher.publish(m)
        : (m: OutgoingMessage) => {
            final = m;
            return publisher.publish(m);
          };
    let sent: Promise<Receipt>;
    try {
      sent = this.#middleware.length === 0 ? send(message) : this.#through(0, send, message);
    } catch (error) {
      // A middleware or a publisher that throws instead of rejecting still fails only this publish.
      sent = Promise.reject(error);
    }
    if (emit !== undefined) {
      sent.then(
        () => emit({ type: "publish", name: final.name, message: final, purpose, ok: true }),
        (error: unknown) =>
          emit({ type: "publish", name: final.name, message: final, purpose, ok: false, error }),
      );
    }
    return sent;
  }

  #through(
    index: number,
    send: (message: OutgoingMessage) => Promise<Receipt>,
    message: OutgoingMessage,
  ): Promise<Receipt> {
    const layer = this.#middleware[index];
    if (layer === undefined) return send(message);
    return layer(message, (next) => this.#through(index + 1, send, next));
  }
}

/** Headers of a message the runtime encodes: the codec's content type, then the caller's. */
export function encodedHeaders(
  codec: { readonly contentType: string },
  extra: PublishOptions["headers"],
): HeaderMap {
  const headers = new HeaderMap();
  headers.set(headerNames.contentType, codec.contentType);
  if (extra !== undefined)
    for (const [name, value] of new HeaderMap(extra)) headers.set(name, value);
  return headers;
}

/** Builds the publisher a handler gets for one `.publishes({ ... })` entry. */
export function makeOutPublisher(
  name: string,
  codec: Codec<unknown>,
  publisher: Publisher<never>,
  pipeline: PublishPipeline,
): OutPublisher<unknown> {
  const message = (value: unknown, options: PublishOptions = {}): OutgoingMessage => ({
    name,
    payload: codec.encode(value),
    headers: encodedHeaders(codec, options.headers),
    ...(options.partitionKey === undefined ? {} : { partitionKey: options.partitionKey }),
  });
  return {
    name,
    async publish(value, options) {
      return pipeline.publish(publisher, message(value, options), "out");
    },
    async request(value, options: RequestOptions) {
      if (!supportsRequest(publisher)) {
        throw new RustStreamError(
          "unsupported",
          `request() to "${name}": this broker has no request/reply; publish and subscribe to a reply topic instead`,
        );
      }
      const reply = await publisher.request(message(value, options), {
        timeoutMs: options.timeoutMs,
      });
      return codec.decode(reply.payload);
    },
  };
}

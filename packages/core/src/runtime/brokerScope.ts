import type { Broker } from "../broker/contract.js";
import type { Codec } from "../codec/codec.js";
import { CodecsByType, mediaType } from "../codec/codecsByType.js";
import { json } from "../codec/json.js";
import { RustStreamError } from "../errors.js";
import type { Publisher, PublishPolicy } from "../publisher.js";
import { isSource, type Source } from "../source.js";
import type { StandardSchemaV1 } from "./standardSchema.js";
import { SubscriberBuilder } from "./subscriberBuilder.js";
import type { SubscriberSpec } from "./subscriberSpec.js";

/** The descriptors a broker understands, read from what its connected form subscribes to. */
export type SourceOf<TBroker> =
  TBroker extends Broker<infer TConnected>
    ? TConnected extends { subscribe(source: infer TSource): unknown }
      ? Exclude<TSource, string>
      : never
    : never;

/** The per-message publish settings of a broker's default publisher: `never` where it has none. */
export type PublishOptionsOf<TBroker> =
  TBroker extends Broker<infer TConnected>
    ? ReturnType<TConnected["defaultPublishPolicy"]> extends PublishPolicy<never, infer TPublisher>
      ? TPublisher extends Publisher<infer TOptions>
        ? TOptions
        : never
      : never
    : never;

export interface SchemaOptions<TSchema extends StandardSchemaV1> {
  /** Validates every decoded message; the handler's message type is its output type. */
  readonly schema: TSchema;
  /** Decodes the payload before validation (default JSON). */
  readonly codec?: Codec<unknown>;
  /** Decode a delivery whose `content-type` names one of them; see {@link CodecOptions.codecs}. */
  readonly codecs?: readonly Codec<unknown>[];
}

export interface CodecOptions<T> {
  /**
   * Decodes the payload (default JSON, whose messages are `unknown` until a schema says more); with
   * `codecs`, the payloads without a `content-type` and those of its own.
   */
  readonly codec?: Codec<T>;
  /**
   * Codecs a delivery's `content-type` may name besides `codec`'s (`[msgpack, cbor]`), each
   * decoding the deliveries of its type: one subscriber reads what publishers of several codecs
   * sent. A content type none of them (nor `codec`) has is a decode failure, settled by the decode
   * policy. Without `codecs` the content-type is not read: `codec` decodes every delivery.
   */
  readonly codecs?: readonly Codec<NoInfer<T>>[];
}

/** Where a broker's subscribers are declared: the `b` in `app.broker(broker, (b) => ...)`. */
export class BrokerScope<TBroker extends Broker> {
  readonly broker: TBroker;
  readonly #specs: SubscriberSpec[];

  /** @internal Built by `RustStream.broker`. */
  constructor(broker: TBroker, specs: SubscriberSpec[]) {
    this.broker = broker;
    this.#specs = specs;
  }

  /** Subscribes to a name or one of the broker's descriptors, with a schema that types the message. */
  subscriber<TSchema extends StandardSchemaV1>(
    source: string | SourceOf<TBroker>,
    options: SchemaOptions<TSchema>,
  ): SubscriberBuilder<
    StandardSchemaV1.InferOutput<TSchema>,
    never,
    Record<never, never>,
    PublishOptionsOf<TBroker>
  >;
  /** Subscribes with a codec (default JSON); the message type is what the codec decodes. */
  subscriber<T = unknown>(
    source: string | SourceOf<TBroker>,
    options?: CodecOptions<T>,
  ): SubscriberBuilder<T, never, Record<never, never>, PublishOptionsOf<TBroker>>;
  subscriber(
    source: string | SourceOf<TBroker>,
    options: {
      readonly schema?: StandardSchemaV1;
      readonly codec?: Codec<unknown>;
      readonly codecs?: readonly Codec<unknown>[];
    } = {},
  ): SubscriberBuilder<unknown, never, Record<never, never>, PublishOptionsOf<TBroker>> {
    if (!(typeof source === "string" ? source.length > 0 : isSource(source))) {
      throw new RustStreamError(
        "invalid-argument",
        "subscriber() needs a topic name or a descriptor of this broker (for example new MemoryTopic(name))",
      );
    }
    const schema = options.schema;
    if (schema !== undefined && typeof schema["~standard"]?.validate !== "function") {
      throw new RustStreamError(
        "invalid-argument",
        "subscriber({ schema }): the schema is not a Standard Schema v1 validator (zod 3.24+, valibot 1+, arktype 2+ are)",
      );
    }
    const codec = options.codec ?? json;
    const spec: SubscriberSpec = {
      source: source as string | Source,
      name: undefined,
      schema,
      codec,
      codecs: codecsBeside(codec, options.codecs),
      reply: undefined,
      outs: {},
      workers: 1,
      key: undefined,
      maxAttempts: undefined,
      deadLetter: undefined,
      failure: {},
      batch: undefined,
      prefetch: undefined,
      handler: undefined,
    };
    this.#specs.push(spec);
    return new SubscriberBuilder(spec);
  }
}

/** A subscriber's `codecs`: `undefined` for none, refused where one has the codec's own type. */
function codecsBeside(
  codec: Codec<unknown>,
  given: readonly Codec<unknown>[] | undefined,
): CodecsByType | undefined {
  if (given === undefined || (Array.isArray(given) && given.length === 0)) return undefined;
  const codecs = new CodecsByType(given, "subscriber({ codecs })");
  const own = mediaType(codec.contentType);
  if (codecs.get(own) !== undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `subscriber({ codecs }): one of codecs decodes ${own}, the type of the subscriber's codec, which decodes those: leave it out of codecs, or give it as codec`,
    );
  }
  return codecs;
}

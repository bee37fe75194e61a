import type { Broker } from "../broker/contract.js";
import type { Codec } from "../codec/codec.js";
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
}

export interface CodecOptions<T> {
  /** Decodes the payload (default JSON, whose messages are `unknown` until a schema says more). */
  readonly codec?: Codec<T>;
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
    options: { readonly schema?: StandardSchemaV1; readonly codec?: Codec<unknown> } = {},
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
    const spec: SubscriberSpec = {
      source: source as string | Source,
      name: undefined,
      schema,
      codec: options.codec ?? json,
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

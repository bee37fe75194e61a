import type { Bindings, JsonValue } from "../bindings.js";
import { brokerKind } from "../broker/contract.js";
import { supportsDescribeServer } from "../capabilities.js";
import type { Codec } from "../codec/codec.js";
import type { CodecsByType } from "../codec/codecsByType.js";
import { sourceMark } from "../marks.js";
import type { ServerDescription } from "../server.js";
import type { CopyPath, Source } from "../source.js";
import type { BrokerRegistration } from "./appRun.js";
import type { StandardSchemaV1 } from "./standardSchema.js";
import {
  type DecodePolicy,
  defaultMaxAttempts,
  type ErrorPolicy,
  type SubscriberSpec,
} from "./subscriberSpec.js";

/** What an app is, read without connecting: for a documentation generator or a health endpoint. */
export interface AppDescription {
  readonly name: string;
  readonly version: string;
  readonly brokers: readonly BrokerDescription[];
}

/** One registered broker and what is mounted on it. */
export interface BrokerDescription {
  /** The broker's kind, for example `"redis"`. */
  readonly kind: string;
  /** Its server, as the broker describes it before connecting (never with credentials). */
  readonly server: ServerDescription | undefined;
  readonly subscribers: readonly SubscriberDescription[];
}

/** The payload of a message: how it is encoded and, where the validator says, its shape. */
export interface PayloadDescription {
  readonly contentType: string;
  /**
   * The media types a delivery may carry besides `contentType`, each decoded by its codec of the
   * subscriber's `codecs`; absent without them.
   */
  readonly otherContentTypes?: readonly string[];
  /** The validator's vendor and, where it offers Standard JSON Schema, the wire shape. */
  readonly schema?: {
    readonly vendor: string;
    readonly jsonSchema?: { readonly [key: string]: JsonValue };
  };
}

/** Where a subscriber reads from. */
export interface SourceDescription {
  readonly name: string;
  /** The broker kind of its descriptor, or `undefined` for a bare name. */
  readonly kind: string | undefined;
  /** How retry copies travel, where a descriptor says. */
  readonly copies: CopyPath | undefined;
  readonly bindings: Bindings | undefined;
}

/** One destination the runtime publishes to. */
export interface DestinationDescription {
  /** `undefined` for a reply to the message's `reply-to`. */
  readonly name: string | undefined;
  readonly contentType: string;
}

export interface SubscriberDescription {
  readonly name: string;
  readonly source: SourceDescription;
  readonly message: PayloadDescription;
  readonly reply: DestinationDescription | undefined;
  /** The `ctx.out` publishers, by the names the handler uses. */
  readonly publishes: Readonly<Record<string, DestinationDescription>>;
  readonly deadLetter: string | undefined;
  readonly maxAttempts: number;
  readonly workers: number;
  /** What keyed lanes are keyed by, where they are. */
  readonly key: "partitionKey" | "partition" | "function" | undefined;
  /** Messages per batch, for a batch handler. */
  readonly batch: number | undefined;
  readonly prefetch: number;
  readonly failure: {
    readonly error: ErrorPolicy;
    readonly decode: DecodePolicy;
    readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  };
}

export function describeApp(
  info: { readonly name: string; readonly version: string },
  registrations: readonly BrokerRegistration[],
): AppDescription {
  return {
    name: info.name,
    version: info.version,
    brokers: registrations.map(({ broker, specs }) => ({
      kind: brokerKind(broker) ?? "unknown",
      server: supportsDescribeServer(broker) ? broker.describeServer() : undefined,
      subscribers: specs.map(describeSubscriber),
    })),
  };
}

function describeSubscriber(spec: SubscriberSpec): SubscriberDescription {
  const source = spec.source;
  const descriptor: Source | undefined = typeof source === "string" ? undefined : source;
  const reply = spec.reply;
  const publishes: Record<string, DestinationDescription> = {};
  for (const [key, out] of Object.entries(spec.outs)) {
    publishes[key] = { name: out.name, contentType: (out.codec ?? spec.codec).contentType };
  }
  return {
    name: spec.name ?? descriptor?.name ?? (source as string),
    source: {
      name: descriptor?.name ?? (source as string),
      kind: descriptor?.[sourceMark],
      copies: descriptor?.copies,
      bindings: descriptor?.bindings,
    },
    message: describePayload(spec.codec, spec.codecs, spec.schema),
    reply:
      reply === undefined
        ? undefined
        : { name: reply.destination, contentType: spec.codec.contentType },
    publishes,
    deadLetter: spec.deadLetter,
    maxAttempts: spec.maxAttempts ?? defaultMaxAttempts,
    workers: spec.workers,
    key: spec.key === undefined ? undefined : typeof spec.key === "string" ? spec.key : "function",
    batch: spec.batch,
    prefetch: spec.batch ?? spec.prefetch ?? 256,
    failure: {
      error: spec.failure.error ?? "retry",
      decode: spec.failure.decode ?? (spec.deadLetter !== undefined ? "dead-letter" : "drop"),
      backoff: {
        initialMs: spec.failure.backoff?.initialMs ?? 100,
        maxMs: spec.failure.backoff?.maxMs ?? 10_000,
      },
    },
  };
}

/** Standard JSON Schema (standardschema.dev/json-schema): what zod 4.2+ and arktype 2.1.28+ offer. */
interface JsonSchemaConverter {
  readonly input: (options: { readonly target: string }) => unknown;
}

function describePayload(
  codec: Codec<unknown>,
  codecs: CodecsByType | undefined,
  schema: StandardSchemaV1 | undefined,
): PayloadDescription {
  const types = codecs === undefined ? {} : { otherContentTypes: codecs.types };
  if (schema === undefined) return { contentType: codec.contentType, ...types };
  const props = schema["~standard"] as StandardSchemaV1.Props & {
    readonly jsonSchema?: JsonSchemaConverter;
  };
  let jsonSchema: { readonly [key: string]: JsonValue } | undefined;
  try {
    // The input shape: what arrives on the wire, before the validator's transforms.
    const converted = props.jsonSchema?.input({ target: "draft-2020-12" });
    if (typeof converted === "object" && converted !== null) {
      jsonSchema = converted as { readonly [key: string]: JsonValue };
    }
  } catch {
    // A schema the validator cannot express in JSON Schema (a transform, a refinement) is still
    // described by its vendor.
  }
  return {
    contentType: codec.contentType,
    ...types,
    schema: { vendor: props.vendor, ...(jsonSchema === undefined ? {} : { jsonSchema }) },
  };
}

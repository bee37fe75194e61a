import type { JsonValue } from "@ruststream/core";

/** A JSON Schema (the AsyncAPI Schema Object, a superset of draft-07), as plain JSON. */
export type SchemaObject = { readonly [key: string]: JsonValue };

/** A JSON pointer into the document, such as `#/channels/orders`. */
export interface Reference {
  readonly $ref: string;
}

export interface Tag {
  readonly name: string;
  readonly description?: string;
}

/** Protocol-specific facts, keyed by protocol as the AsyncAPI bindings define them. */
export type BindingsObject = { readonly [protocol: string]: SchemaObject };

export interface Info {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
}

export interface Server {
  readonly host: string;
  readonly protocol: string;
  readonly protocolVersion?: string;
  readonly description?: string;
  readonly bindings?: BindingsObject;
}

export interface Channel {
  /** The topic, stream or queue; `null` where it is known only per message (a `reply-to`). */
  readonly address: string | null;
  readonly title?: string;
  readonly description?: string;
  readonly messages: { readonly [name: string]: Reference };
  readonly servers?: readonly Reference[];
  readonly bindings?: BindingsObject;
}

export interface OperationReply {
  /** Where the reply goes when each message names it (`$message.header#/reply-to`). */
  readonly address?: { readonly location: string; readonly description?: string };
  readonly channel: Reference;
  readonly messages: readonly Reference[];
}

/**
 * What the mount declared about failing deliveries, as RustStream writes it: the attempt cap, the
 * backoff between attempts and where a message goes once out of attempts. An extension, since no
 * AsyncAPI binding carries an attempt cap, and only SQS and SNS carry a dead letter.
 */
export interface RetryExtension {
  readonly maxAttempts: number;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  /** The dead-letter destination's name; its channel is in the document with a `send` operation. */
  readonly deadLetter?: string;
  /** Where retry copies are published, when that is not the subscription's own address. */
  readonly retryDestination?: string;
}

export interface Operation {
  readonly action: "send" | "receive";
  readonly channel: Reference;
  readonly messages: readonly Reference[];
  readonly title?: string;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: readonly Tag[];
  readonly reply?: OperationReply;
  readonly bindings?: BindingsObject;
  readonly "x-ruststream-retry"?: RetryExtension;
  /**
   * The descriptor's facts that no AsyncAPI binding has a field for (a Pulsar subscription type,
   * a Kafka commit mode, a memory group), keyed by protocol as the descriptor states them.
   */
  readonly "x-ruststream-bindings"?: BindingsObject;
}

export interface MessageObject {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly contentType: string;
  /** A reference into `components.schemas`; absent where the app knows no schema for it. */
  readonly payload?: Reference;
  readonly headers?: Reference;
  readonly correlationId?: { readonly location: string; readonly description?: string };
  readonly bindings?: BindingsObject;
}

export interface Components {
  readonly schemas?: { readonly [name: string]: SchemaObject };
  readonly messages?: { readonly [name: string]: MessageObject };
}

/** An AsyncAPI 3.1.0 document: plain JSON, ready for `JSON.stringify`. */
export interface AsyncApiDocument {
  readonly asyncapi: "3.1.0";
  readonly info: Info;
  /** The media type every message agrees on; absent where they differ. */
  readonly defaultContentType?: string;
  readonly servers?: { readonly [name: string]: Server };
  readonly channels?: { readonly [id: string]: Channel };
  readonly operations?: { readonly [id: string]: Operation };
  readonly components?: Components;
}

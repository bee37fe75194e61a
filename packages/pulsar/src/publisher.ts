import {
  type DeadLetterOrigin,
  type Delivery,
  HeaderMap,
  type OutgoingMessage,
  type RawMessage,
  type Receipt,
  type Requester,
  type RequestOptions,
  RustStreamError,
} from "@ruststream/core";
import {
  assertPayloadBytes,
  type brokerMark,
  type PendingReply,
  partitionKeyBytes,
  publishRequest,
  requestMark,
  utf8Text,
  writeDeadLetterOrigin,
} from "@ruststream/core/broker";
import type { LinkProducer } from "./link/link.js";
import { pulsarProperties } from "./names.js";
import type { Compression } from "./wire/compression.js";
import type {
  BatchingOptions,
  OutgoingMessage as WireMessage,
} from "./wire/producer/producerOptions.js";
import { parseTopicName, partitionTopicName } from "./wire/topicName.js";

/** Pulsar's own per-message settings, typed into handlers by the runtime. */
export interface PulsarPublishOptions {
  /**
   * Deliver no earlier than this time (ms since the epoch, or a Date). Shared and Key_Shared
   * subscriptions hold the message until then; Exclusive and Failover ones get it at once, as the
   * broker dispatches there. The message is sent unbatched.
   */
  readonly deliverAt?: number | Date;
  /** The same as `deliverAt: now + deliverAfterMs`. */
  readonly deliverAfterMs?: number;
  /** The application's own time for the message (ms since the epoch, or a Date). */
  readonly eventTime?: number | Date;
  /** Routes the message on Key_Shared subscriptions instead of its partition key. */
  readonly orderingKey?: Uint8Array | string;
  /** On a partitioned topic: this partition, instead of the one the partition key hashes to. */
  readonly partition?: number;
}

/** How this policy's producers send. */
export interface PulsarPublishSettings {
  /**
   * Batching of messages sent close together into one broker entry (default: on, 1 ms, one batch
   * per key so Key_Shared subscriptions route each key alone); `false` sends each alone.
   */
  readonly batching?: false | BatchingOptions;
  /** Payload compression (default `NONE`). */
  readonly compression?: Compression;
}

/** A producer this connection keeps: its topic, and the subscription it creates with the topic. */
export interface ProducerKey {
  readonly topic: string;
  readonly initialSubscription?: string | undefined;
  readonly settings: PulsarPublishSettings;
}

/**
 * What a publisher needs from its connection. Declared here and implemented by the connected
 * broker, so this file never imports connection.ts: no cycle between a connection and its publisher.
 */
export interface PublisherHost {
  readonly [brokerMark]: string;
  assertOpen(): void;
  readonly isClosed: boolean;
  closedError(what: string): RustStreamError;
  /** The producer for a topic, opened on first use and kept until shutdown. */
  producer(key: ProducerKey): Promise<LinkProducer>;
  /** Keeps a copy of what is published, on an in-process connection, for the test's `published()`. */
  record(message: RawMessage): void;
  /** Publishes counted for the closed witness's `unflushed`. */
  readonly inflight: { count: number };
  /** Waits for the reply correlated by `correlationId` on this connection's reply inbox. */
  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply>;
  /** Wall-clock milliseconds, for `deliverAfterMs` (the test's clock in-process). */
  now(): number;
}

function text(bytes: Uint8Array): string | undefined {
  try {
    return utf8Text(bytes);
  } catch {
    return undefined;
  }
}

function millis(what: string, value: number | Date): number {
  const ms = typeof value === "number" ? value : value.getTime();
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: ${String(value)}; give whole milliseconds since the epoch (or a Date)`,
    );
  }
  return ms;
}

/**
 * Where a delivery of this package came from, read by shape: the topic it was published to for
 * its subscription and its position there, what a dead letter's `REAL_TOPIC` and
 * `ORIGIN_MESSAGE_ID` say.
 */
function pulsarCause(cause: Delivery | undefined): { topic: string; id: string } | undefined {
  const c = cause as (Delivery & { sourceTopic?: unknown }) | undefined;
  if (c === undefined || typeof c.sourceTopic !== "string") return undefined;
  return { topic: c.sourceTopic, id: String(c.position) };
}

/**
 * The topic a dead letter's origin names, in full, when no delivery says it: the origin's
 * partition where it has one, as Pulsar's clients write REAL_TOPIC.
 */
function originTopic(origin: DeadLetterOrigin): string {
  const name = parseTopicName(origin.source);
  return origin.partition === undefined ? name.full : partitionTopicName(name, origin.partition);
}

/** The last name published to and its full topic name: a publish loop names one topic over and over. */
let lastTopic: { readonly name: string; readonly full: string } | undefined;

function fullTopicName(name: string): string {
  if (lastTopic?.name === name) return lastTopic.full;
  const full = parseTopicName(name).full;
  lastTopic = { name, full };
  return full;
}

/** A message ready for the wire, and what `published()` records of it. */
export interface PreparedMessage {
  /** The full topic name. */
  readonly topic: string;
  readonly wire: WireMessage;
  readonly raw: RawMessage;
}

/**
 * The wire message a publish sends, or the refusal, before anything is sent: every publish, copy
 * and in-process injection goes through here, so all refuse the same messages. Properties are
 * strings on Pulsar: a header value that is not UTF-8 is refused (`publish-refused`), never mangled.
 */
export function prepareMessage(
  message: OutgoingMessage<PulsarPublishOptions>,
  now: () => number,
): PreparedMessage {
  if (typeof message.name !== "string" || message.name.length === 0) {
    throw new RustStreamError("invalid-argument", "publish() needs a non-empty topic name");
  }
  assertPayloadBytes(message);
  const topic = fullTopicName(message.name);
  const headers = message.headers?.clone() ?? new HeaderMap();
  const origin = message.deadLetterOrigin;
  if (origin !== undefined) writeDeadLetterOrigin(headers, origin);
  const properties = new Map<string, string>();
  // Text set as a string goes as it is; only bytes are decoded (and refused if not UTF-8).
  for (const [name, value] of headers.entriesAsHeld()) {
    const decoded = typeof value === "string" ? value : text(value);
    if (decoded === undefined) {
      throw new RustStreamError(
        "publish-refused",
        `header "${name}" of a message for "${message.name}" is not UTF-8 text, and Pulsar properties are strings: send text (base64 or hex for bytes) in headers, or the bytes in the payload`,
      );
    }
    properties.set(name, decoded);
  }
  if (origin !== undefined) {
    const cause = pulsarCause(message.cause);
    properties.set(pulsarProperties.realTopic, cause?.topic ?? originTopic(origin));
    const id = cause?.id ?? origin.position;
    if (id !== undefined) properties.set(pulsarProperties.originMessageId, id);
  }
  let key: string | undefined;
  if (message.partitionKey !== undefined) {
    key = text(partitionKeyBytes(message.partitionKey));
    if (key === undefined) {
      throw new RustStreamError(
        "publish-refused",
        `the partition key of a message for "${message.name}" is not UTF-8 text, and a Pulsar key is a string: give a text key`,
      );
    }
  }
  const wire: {
    -readonly [K in keyof WireMessage]: WireMessage[K];
  } = { payload: message.payload.slice(), properties };
  if (key !== undefined) wire.key = key;
  const options = message.options;
  if (options !== undefined) applyOptions(wire, options, now, message.name);
  const raw: RawMessage = {
    name: message.name,
    payload: wire.payload,
    headers,
    partitionKey: key === undefined ? undefined : partitionKeyBytes(key),
  };
  return { topic, wire, raw };
}

function applyOptions(
  wire: { -readonly [K in keyof WireMessage]: WireMessage[K] },
  options: PulsarPublishOptions,
  now: () => number,
  name: string,
): void {
  if (typeof options !== "object" || options === null) {
    throw new RustStreamError(
      "invalid-argument",
      `publish options for "${name}" must be an object`,
    );
  }
  if (options.deliverAt !== undefined && options.deliverAfterMs !== undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `a message for "${name}" has both deliverAt and deliverAfterMs: give one`,
    );
  }
  if (options.deliverAt !== undefined) wire.deliverAt = millis("deliverAt", options.deliverAt);
  if (options.deliverAfterMs !== undefined) {
    const after = options.deliverAfterMs;
    if (!Number.isFinite(after) || after < 0) {
      throw new RustStreamError(
        "invalid-argument",
        `deliverAfterMs: ${after}; give a delay of 0 ms or more`,
      );
    }
    wire.deliverAt = Math.ceil(now() + after);
  }
  if (options.eventTime !== undefined) wire.eventTime = millis("eventTime", options.eventTime);
  if (options.orderingKey !== undefined) {
    wire.orderingKey = partitionKeyBytes(options.orderingKey).slice();
  }
  if (options.partition !== undefined) {
    if (!Number.isSafeInteger(options.partition) || options.partition < 0) {
      throw new RustStreamError(
        "invalid-argument",
        `partition: ${options.partition}; give a partition index, 0 or more`,
      );
    }
    wire.partition = options.partition;
  }
}

/**
 * Publishes to topics through one producer per topic (opened on first use); each publish resolves
 * on the broker's receipt, with the message id as the receipt's position. A requester: replies come
 * to a reply topic this connection reads.
 */
export class PulsarPublisher implements Requester<PulsarPublishOptions> {
  readonly [requestMark] = true as const;
  readonly #host: PublisherHost;
  readonly #settings: PulsarPublishSettings;

  constructor(host: PublisherHost, settings: PulsarPublishSettings) {
    this.#host = host;
    this.#settings = settings;
  }

  async publish(message: OutgoingMessage<PulsarPublishOptions>): Promise<Receipt> {
    this.#host.assertOpen();
    const prepared = prepareMessage(message, () => this.#host.now());
    this.#host.record(prepared.raw);
    const id = await sendPrepared(this.#host, prepared, {
      topic: prepared.topic,
      settings: this.#settings,
    });
    return { name: message.name, position: id };
  }

  async request(
    message: OutgoingMessage<PulsarPublishOptions>,
    options: RequestOptions,
  ): Promise<RawMessage> {
    this.#host.assertOpen();
    return publishRequest(
      message,
      (correlationId) => this.#host.awaitReply(correlationId, options.timeoutMs),
      (request) => this.publish(request),
      options,
    );
  }
}

/**
 * Sends a prepared message through the producer `key` names, counted in flight until its receipt;
 * answers the message id's text. After shutdown the failure is the `closed` error.
 */
export async function sendPrepared(
  host: PublisherHost,
  prepared: PreparedMessage,
  key: ProducerKey,
): Promise<string> {
  host.inflight.count++;
  try {
    const producer = await host.producer(key);
    host.assertOpen();
    const id = await producer.send(prepared.wire);
    return id.toString();
  } catch (error) {
    if (host.isClosed) throw host.closedError("publisher");
    throw error;
  } finally {
    host.inflight.count--;
  }
}

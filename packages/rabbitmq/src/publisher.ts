import {
  type OutgoingMessage,
  type RawMessage,
  type Receipt,
  type Requester,
  type RequestOptions,
  RustStreamError,
  type Transaction,
  type TransactionalPublisher,
} from "@ruststream/core";
import {
  assertPayloadBytes,
  type brokerMark,
  type PendingReply,
  publishRequest,
  requestMark,
  stageTransaction,
  transactionsMark,
  wireHeaders,
} from "@ruststream/core/broker";
import { propertiesOf } from "./amqpHeaders.js";
import type { PublishRequest } from "./link.js";
import { directReplyTo, rabbitHeaderNames } from "./names.js";

/** RabbitMQ's own per-message settings, typed into handlers by the runtime. */
export interface RabbitPublishOptions {
  /** The message's priority, for a queue declared with `x-max-priority`. */
  readonly priority?: number;
  /** Per-message TTL in milliseconds: gone (or dead-lettered) if still queued after it. */
  readonly expirationMs?: number;
  /** Overrides the policy's `mandatory` for this message. */
  readonly mandatory?: boolean;
  /** Overrides the policy's `persistent` for this message. */
  readonly persistent?: boolean;
}

/** How a policy's messages go out. */
export interface RabbitPublishSettings {
  /** The exchange every message goes to, its name the routing key ("" for the default exchange). */
  readonly exchange: string;
  readonly mandatory: boolean;
  readonly persistent: boolean;
}

/**
 * What a publisher needs from its connection. Declared here and implemented by the connected
 * broker, so this file never imports connection.ts: no cycle between a connection and its publisher.
 */
export interface PublisherHost {
  readonly [brokerMark]: string;
  readonly maxMessageBytes: number;
  readonly isClosed: boolean;
  assertOpen(): void;
  closedError(what: string): RustStreamError;
  /** Publishes with a confirm; `request` puts it on the channel replies come back to. */
  send(request: PublishRequest, kind: "publish" | "request"): Promise<void>;
  /** Publishes `requests` in one AMQP transaction (Link.commit says what a failure means). */
  commit(requests: readonly PublishRequest[]): Promise<void>;
  /** Keeps a copy of what is published, on an in-process connection, for the test's `published()`. */
  record(message: RawMessage): void;
  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply>;
}

/**
 * The request a message goes out as, or the refusal, before anything is sent: every publish, copy
 * and in-process injection goes through here, so all refuse the same messages.
 */
export function prepare(
  message: OutgoingMessage<RabbitPublishOptions>,
  settings: RabbitPublishSettings,
  maxMessageBytes: number,
): { readonly request: PublishRequest; readonly raw: RawMessage } {
  if (typeof message.name !== "string") {
    throw new RustStreamError("invalid-argument", "publish() needs a name: the routing key");
  }
  assertPayloadBytes(message);
  const where = `exchange "${settings.exchange}" with routing key "${message.name}"`;
  if (Buffer.byteLength(message.name) > 255) {
    throw new RustStreamError(
      "publish-refused",
      `a routing key of ${Buffer.byteLength(message.name)} bytes is over AMQP's 255`,
    );
  }
  if (message.payload.length > maxMessageBytes) {
    throw new RustStreamError(
      "publish-refused",
      `a payload of ${message.payload.length} bytes for ${where} is over maxMessageBytes (${maxMessageBytes}); raise it in the RabbitBroker options`,
    );
  }
  const options = checkedOptions(message.options, where);
  const headers = wireHeaders(message, rabbitHeaderNames.partitionKey);
  const properties = propertiesOf(headers, where);
  const content = message.payload.slice();
  // A reply to direct reply-to goes without `mandatory`: 3.10 returns such a reply as unroutable
  // although it delivers it.
  const toReplyAddress = isReplyAddress({ exchange: settings.exchange, routingKey: message.name });
  const request: PublishRequest = {
    exchange: settings.exchange,
    routingKey: message.name,
    content,
    properties: {
      ...properties,
      persistent: options?.persistent ?? settings.persistent,
      ...(options?.priority === undefined ? {} : { priority: options.priority }),
      ...(options?.expirationMs === undefined ? {} : { expiration: String(options.expirationMs) }),
    },
    mandatory: toReplyAddress ? false : (options?.mandatory ?? settings.mandatory),
  };
  const partitionKey = headers.get(rabbitHeaderNames.partitionKey);
  return { request, raw: { name: message.name, payload: content, headers, partitionKey } };
}

/** A publish to a requester's direct reply-to address (the default exchange, `amq.rabbitmq.reply-to.…`). */
function isReplyAddress(request: Pick<PublishRequest, "exchange" | "routingKey">): boolean {
  return request.exchange === "" && request.routingKey.startsWith(`${directReplyTo}.`);
}

function checkedOptions(
  options: RabbitPublishOptions | undefined,
  where: string,
): RabbitPublishOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null) {
    throw new RustStreamError("invalid-argument", `publish options for ${where} must be an object`);
  }
  const p = options.priority;
  if (p !== undefined && (!Number.isInteger(p) || p < 0 || p > 255)) {
    throw new RustStreamError(
      "invalid-argument",
      `priority: ${p}; give a whole number from 0 to 255`,
    );
  }
  const e = options.expirationMs;
  if (e !== undefined && (!Number.isSafeInteger(e) || e < 0)) {
    throw new RustStreamError(
      "invalid-argument",
      `expirationMs: ${e}; give whole milliseconds, 0 or more`,
    );
  }
  return options;
}

/**
 * Publishes to one exchange, each name a routing key; each publish resolves on the server's confirm
 * and rejects on its nack, or when the server could route it nowhere under `mandatory`. A
 * requester: replies come back by direct reply-to on the channel the request went out on, many in
 * flight at once, matched by correlation id. Transactional: `transaction(work)` checks and stages
 * each `tx.publish` as it is made, and once `work` resolves publishes them in one AMQP transaction
 * (tx.commit on a channel of its own); nothing is sent when it throws.
 */
export class RabbitPublisher
  implements Requester<RabbitPublishOptions>, TransactionalPublisher<RabbitPublishOptions>
{
  readonly [requestMark] = true as const;
  readonly [transactionsMark] = true as const;
  readonly #host: PublisherHost;
  readonly #settings: RabbitPublishSettings;

  constructor(host: PublisherHost, settings: RabbitPublishSettings) {
    this.#host = host;
    this.#settings = settings;
  }

  async publish(message: OutgoingMessage<RabbitPublishOptions>): Promise<Receipt> {
    await this.#send(message, "publish");
    return { name: message.name };
  }

  /**
   * Runs `work` in a transaction: publishes what it staged when it resolves, nothing when it throws
   * (and rethrows). Resolves once RabbitMQ committed every message (each `mandatory` one routed);
   * a failed commit rejects saying whether nothing, part or an unknown share was published.
   */
  async transaction<T>(work: (tx: Transaction<RabbitPublishOptions>) => Promise<T>): Promise<T> {
    this.#host.assertOpen();
    const staged: Array<{ request: PublishRequest; raw: RawMessage }> = [];
    const result = await stageTransaction(work, (message) => {
      const prepared = this.#prepare(message);
      if (isReplyAddress(prepared.request)) {
        // RabbitMQ hands a reply to its requester when the publish arrives, tx mode or not: in a
        // transaction it would go out before the commit, and even if the transaction aborted.
        throw new RustStreamError(
          "unsupported",
          `a reply to direct reply-to ("${message.name}") cannot be part of a transaction: RabbitMQ delivers it at once, outside the transaction; publish it with publisher.publish after the transaction`,
        );
      }
      staged.push(prepared);
    });
    // Checked again: the broker may have shut down while `work` ran.
    this.#host.assertOpen();
    if (staged.length === 0) return result;
    // The link's refusal as it is, also after a shutdown: it says whether the commit was sent
    // (`closed` when it was not, of unknown outcome when it was), which a plain `closed` would hide.
    await this.#host.commit(staged.map((s) => s.request));
    for (const { raw } of staged) this.#host.record(raw);
    return result;
  }

  async request(
    message: OutgoingMessage<RabbitPublishOptions>,
    options: RequestOptions,
  ): Promise<RawMessage> {
    this.#host.assertOpen();
    return publishRequest(
      message,
      (correlationId) => this.#host.awaitReply(correlationId, options.timeoutMs),
      (request) => this.#send(request, "request"),
      options,
    );
  }

  async #send(
    message: OutgoingMessage<RabbitPublishOptions>,
    kind: "publish" | "request",
  ): Promise<void> {
    const { request, raw } = this.#prepare(message);
    this.#host.record(raw);
    try {
      await this.#host.send(request, kind);
    } catch (error) {
      if (this.#host.isClosed) throw this.#host.closedError("publisher");
      throw error;
    }
  }

  #prepare(message: OutgoingMessage<RabbitPublishOptions>): {
    readonly request: PublishRequest;
    readonly raw: RawMessage;
  } {
    this.#host.assertOpen();
    return prepare(message, this.#settings, this.#host.maxMessageBytes);
  }
}

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
  type PendingReply,
  publishRequest,
  requestMark,
  stageTransaction,
  transactionsMark,
  wireHeaders,
} from "@ruststream/core/broker";
import { encodeFrame } from "./client/frame.js";
import type { Link } from "./client/link.js";
import { type Command, type Reply, text } from "./client/resp.js";
import { RedisListDelivery } from "./list/listDelivery.js";
import { redisHeaders } from "./names.js";
import { entryFields, xadd } from "./stream/entry.js";
import { RedisStreamDelivery } from "./stream/streamDelivery.js";

/** Where a publish goes: a stream (`XADD`), a list (`LPUSH`) or a channel (`PUBLISH`). */
export type RedisTransport = "stream" | "list" | "pubsub";

export interface RedisPublishSettings {
  /**
   * The transport every publish of this policy uses. Without it a name goes to a stream, unless this
   * connection reads it as a list or a channel (so replies and retry copies reach their source).
   */
  readonly transport?: RedisTransport;
  /** Approximate `MAXLEN` trimming of the streams this policy appends to (default: the broker's). */
  readonly maxLen?: number;
}

/**
 * What a publisher needs from its connection. Declared here and implemented by the connected broker,
 * so this file never imports connection.ts: no cycle between a connection and its publisher.
 */
export interface PublisherHost {
  readonly link: Link;
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
  readonly isClosed: boolean;
  closedError(what: string): RustStreamError;
  /** Approximate `MAXLEN` for every entry this connection appends, if set. */
  readonly maxLen: number | undefined;
  readonly maxMessageBytes: number;
  /** Where a name is published to when no policy says: lists and channels this connection reads. */
  transportOf(name: string): RedisTransport;
  /** Keeps a copy of what is published, on an in-process connection, for the test's `published()`. */
  record(message: RawMessage): void;
}

/** What a publisher needs beyond the connection: a reply inbox for requests. */
export interface RequestHost {
  /** Waits for the reply correlated by `correlationId` on this connection's reply inbox. */
  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply>;
}

/**
 * Publishes to streams, lists and channels; resolves on the server's reply. Transactional (`MULTI` /
 * `EXEC`) and a requester.
 */
export class RedisPublisher implements TransactionalPublisher, Requester {
  readonly [transactionsMark] = true as const;
  readonly [requestMark] = true as const;
  readonly #host: PublisherHost;
  readonly #requests: RequestHost;
  readonly #settings: RedisPublishSettings;
  readonly #inflight: { count: number };

  constructor(
    host: PublisherHost,
    requests: RequestHost,
    settings: RedisPublishSettings,
    inflight: { count: number },
  ) {
    this.#host = host;
    this.#requests = requests;
    this.#settings = settings;
    this.#inflight = inflight;
  }

  async publish(message: OutgoingMessage): Promise<Receipt> {
    const { command, transport, raw } = this.#prepare(message);
    this.#host.record(raw);
    this.#inflight.count++;
    try {
      const reply = await this.#send(message, command, transport);
      // No reply on a stream: a dead letter its entry's new holder writes instead (see #send).
      return transport === "stream" && reply !== null
        ? { name: message.name, position: text(reply) }
        : { name: message.name };
    } catch (error) {
      throw this.#failure(error, message.name);
    } finally {
      this.#inflight.count--;
    }
  }

  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    this.#host.assertOpen();
    const commands: Command[] = [];
    const sent: RawMessage[] = [];
    const result = await stageTransaction(work, (message) => {
      const prepared = this.#prepare(message);
      commands.push(prepared.command);
      sent.push(prepared.raw);
    });
    // Checked again: the broker may have shut down while `work` ran.
    this.#host.assertOpen();
    if (commands.length === 0) return result;
    for (const raw of sent) this.#host.record(raw);
    this.#inflight.count += commands.length;
    try {
      await this.#host.link.transaction(commands);
    } catch (error) {
      throw this.#failure(error, "a transaction");
    } finally {
      this.#inflight.count -= commands.length;
    }
    return result;
  }

  async request(message: OutgoingMessage, options: RequestOptions): Promise<RawMessage> {
    this.#host.assertOpen();
    return publishRequest(
      message,
      (correlationId) => this.#requests.awaitReply(correlationId, options.timeoutMs),
      (request) => this.publish(request),
      options,
    );
  }

  /** The command a publish sends, checked as `publish` checks it: for a test's synchronous inject. */
  command(message: OutgoingMessage): { command: Command; raw: RawMessage } {
    return this.#prepare(message);
  }

  /**
   * A copy that takes its cause's place (the runtime's retry copy and dead letter, `replacesCause`),
   * to a stream or a list, for an entry of a stream or a value of a reliable list read on this
   * connection goes with that delivery's ack, in one step, and only while the delivery is still its
   * consumer's (RedisStreamDelivery and RedisListDelivery forwardWith); everything else is one
   * command. Written as a publish and then an ack, a kill between the two left the original to be
   * delivered again beside its copy: two copies, each retried and dead-lettered in turn.
   */
  #send(message: OutgoingMessage, command: Command, transport: RedisTransport): Promise<Reply> {
    const cause = message.cause;
    if (
      transport !== "pubsub" &&
      message.replacesCause === true &&
      (cause instanceof RedisStreamDelivery || cause instanceof RedisListDelivery)
    ) {
      const moved = cause.forwardWith(this.#host.link, command);
      if (moved !== undefined) return moved;
    }
    return this.#host.link.call(command.name, command.args);
  }

  #failure(error: unknown, what: string): Error {
    if (this.#host.isClosed) return this.#host.closedError("publisher");
    if (error instanceof RustStreamError) return error;
    return new RustStreamError(
      "broker-failure",
      `Redis refused the publish to ${what.startsWith("a ") ? what : `"${what}"`}: ${(error as Error).message}`,
      { cause: error },
    );
  }

  // Validates before anything is sent; builds the command from copies, so callers may reuse buffers.
  #prepare(message: OutgoingMessage): {
    command: Command;
    transport: RedisTransport;
    raw: RawMessage;
  } {
    this.#host.assertOpen();
    if (typeof message.name !== "string" || message.name.length === 0) {
      throw new RustStreamError(
        "invalid-argument",
        "publish() needs a non-empty stream, list or channel name",
      );
    }
    assertPayloadBytes(message);
    const limit = this.#host.maxMessageBytes;
    if (message.payload.length > limit) {
      throw new RustStreamError(
        "publish-refused",
        `a payload of ${message.payload.length} bytes for "${message.name}" is over the Redis broker's maxMessageBytes (${limit}); raise maxMessageBytes in the RedisBroker options, or send a smaller message`,
      );
    }
    if (message.options !== undefined) {
      throw new RustStreamError(
        "unsupported",
        "the Redis broker has no per-message publish options: set the partition key with partitionKey, and trimming on the RedisPublish policy",
      );
    }
    const headers = wireHeaders(message, redisHeaders.partitionKey);
    if (message.deadLetterOrigin !== undefined) {
      headers.set(redisHeaders.deadLetterReason, message.deadLetterOrigin.reason);
    }
    const transport = this.#settings.transport ?? this.#host.transportOf(message.name);
    const payload = message.payload.slice();
    const raw: RawMessage = {
      name: message.name,
      payload,
      headers,
      // Read only where publishes are recorded (in-process): a server publish leaves a string key
      // as text, which the command carries as it is.
      get partitionKey() {
        return headers.get(redisHeaders.partitionKey);
      },
    };
    if (transport === "stream") {
      const maxLen = this.#settings.maxLen ?? this.#host.maxLen;
      return { command: xadd(message.name, entryFields(headers, payload), maxLen), transport, raw };
    }
    const frame = encodeFrame(headers, payload);
    // A cluster's sharded channels take SPUBLISH, which reaches SSUBSCRIBE and nothing else.
    const name =
      transport === "list"
        ? "LPUSH"
        : this.#host.link.cluster?.pubsub === "sharded"
          ? "SPUBLISH"
          : "PUBLISH";
    return { command: { name, args: [message.name, frame] }, transport, raw };
  }
}

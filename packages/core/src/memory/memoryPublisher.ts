import type {
  Requester,
  RequestOptions,
  Transaction,
  TransactionalPublisher,
} from "../capabilities.js";
import { RustStreamError } from "../errors.js";
import { headerNames } from "../headerNames.js";
import { requestMark, transactionsMark } from "../marks.js";
import {
  assertPayloadBytes,
  type OutgoingMessage,
  type RawMessage,
  type Receipt,
  wireHeaders,
} from "../message.js";
import { type PendingReply, publishRequest } from "../replyWaiters.js";
import { stageTransaction } from "../transaction.js";

/** What a publisher needs from its connection. */
export interface PublisherHost {
  assertOpen(): void;
  readonly maxMessageBytes: number;
  append(message: RawMessage): bigint;
  /** Waits for the reply correlated by `correlationId` on this connection's reply inbox. */
  awaitReply(correlationId: string, timeoutMs: number): PendingReply;
}

/** Publishes to memory topics; also transactional and a requester. */
export class MemoryPublisher implements TransactionalPublisher, Requester {
  readonly [transactionsMark] = true as const;
  readonly [requestMark] = true as const;
  readonly #host: PublisherHost;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  async publish(message: OutgoingMessage): Promise<Receipt> {
    const stored = prepareMessage(this.#host, message);
    const sequence = this.#host.append(stored);
    return { name: stored.name, position: sequence.toString() };
  }

  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    this.#host.assertOpen();
    const buffered: RawMessage[] = [];
    const result = await stageTransaction(work, (message) => {
      buffered.push(prepareMessage(this.#host, message));
    });
    // Commit: checked again, since the broker may have shut down while `work` ran.
    this.#host.assertOpen();
    for (const message of buffered) this.#host.append(message);
    return result;
  }

  request(message: OutgoingMessage, options: RequestOptions): Promise<RawMessage> {
    return publishRequest(
      message,
      (correlationId) => this.#host.awaitReply(correlationId, options.timeoutMs),
      (request) => this.publish(request),
      options,
    );
  }
}

/**
 * Validates before anything is stored, and copies, so the caller may reuse its buffers. Shared by
 * publishing and by a test's synchronous injection, so both refuse exactly the same messages.
 */
export function prepareMessage(host: PublisherHost, message: OutgoingMessage): RawMessage {
  host.assertOpen();
  if (typeof message.name !== "string" || message.name.length === 0) {
    throw new RustStreamError("invalid-argument", "publish() needs a non-empty topic name");
  }
  assertPayloadBytes(message);
  if (message.payload.length > host.maxMessageBytes) {
    throw new RustStreamError(
      "publish-refused",
      `a payload of ${message.payload.length} bytes for "${message.name}" is over the memory broker's maxMessageBytes (${host.maxMessageBytes}); raise it in the MemoryBroker options`,
    );
  }
  if (message.options !== undefined) {
    throw new RustStreamError(
      "unsupported",
      "the memory broker has no per-message publish options: remove options from the message",
    );
  }
  const headers = wireHeaders(message);
  return {
    name: message.name,
    payload: message.payload.slice(),
    headers,
    partitionKey: headers.get(headerNames.partitionKey),
  };
}

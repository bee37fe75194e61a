import type {
  OutgoingMessage,
  RawMessage,
  ReadonlyHeaderMap,
  Receipt,
  Requester,
  RequestOptions,
  Transaction,
  TransactionalPublisher,
} from "@ruststream/core";
import {
  type brokerMark,
  type PendingReply,
  publishRequest,
  requestMark,
  stageTransaction,
  transactionsMark,
} from "@ruststream/core/broker";

/** A message of a transaction, checked and copied when it was published, written at commit. */
export interface StagedMessage {
  readonly name: string;
  readonly payload: Uint8Array;
  /** The headers the frame carries, before the transaction's mark is added to them. */
  readonly headers: ReadonlyHeaderMap;
  /** What the message is recorded as, in process. */
  readonly raw: RawMessage;
}

/**
 * What a publisher needs from its connection. Declared here and implemented by
 * `ConnectedFileBroker`, so this file never imports the connection: no cycle between a connection and
 * its publisher.
 */
export interface PublisherHost {
  readonly [brokerMark]: string;
  /** Throws `closed` once the connection has shut down. */
  assertOpen(): void;
  /** Validates, encodes and appends one message; resolves once its bytes are handed to the OS. */
  append(message: OutgoingMessage): Promise<Receipt>;
  /** Validates and copies a message of a transaction, refusing what its commit could not write. */
  stage(message: OutgoingMessage): StagedMessage;
  /** Writes a transaction's messages as one run of frames; resolves once all are handed to the OS. */
  commit(staged: readonly StagedMessage[]): Promise<void>;
  /** Waits for the reply correlated by `correlationId` on this connection's reply inbox. */
  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply>;
}

/**
 * Appends to the file. A publish resolves once the bytes are handed to the operating system, so
 * readers (in this process or another) see them; the receipt's position is the message's sequence
 * number in its stream. Durability (fsync) comes with the broker's shutdown.
 *
 * Transactional: `transaction(work)` checks and copies each `tx.publish` as it is made, and once
 * `work` resolves writes them as one run of marked frames, which this package's readers hand out
 * only once the run's last frame is read whole (wire/transactionMark.ts). A requester too: `request`
 * publishes with the connection's reply inbox, a stream key of the same file, as `reply-to`
 * (replyInbox.ts).
 */
export class FilePublisher implements TransactionalPublisher, Requester {
  readonly [transactionsMark] = true as const;
  readonly [requestMark] = true as const;
  readonly #host: PublisherHost;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  async publish(message: OutgoingMessage): Promise<Receipt> {
    return this.#host.append(message);
  }

  /**
   * Runs `work` in a transaction: writes what it published when it resolves, nothing when it throws
   * (and rethrows). Each `tx.publish` resolves once its message is checked and staged; the
   * transaction resolves once all of them are handed to the OS, and rejects, with nothing
   * delivered, when the write fails.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    this.#host.assertOpen();
    const staged: StagedMessage[] = [];
    const result = await stageTransaction(work, (message) => {
      staged.push(this.#host.stage(message));
    });
    await this.#host.commit(staged);
    return result;
  }

  async request(message: OutgoingMessage, options: RequestOptions): Promise<RawMessage> {
    this.#host.assertOpen();
    return publishRequest(
      message,
      (correlationId) => this.#host.awaitReply(correlationId, options.timeoutMs),
      (request) => this.#host.append(request),
      options,
    );
  }
}

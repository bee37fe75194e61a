// A PartitionProducer owns one topic (or one partition of a partitioned topic): it gives each entry
// the next sequence id, batches messages into entries (batchContainer.ts, batchPayload.ts), builds
// each entry's SEND frame once (entryFrame.ts), and keeps it until its receipt comes back
// (pendingSends.ts). After
// the broker or the connection drops it, it attaches again (attacher.ts) and resends every entry
// still waiting, in order.
import { RustStreamError } from "@ruststream/core";
import { Attacher, type Attachment, type AttachTarget } from "../attacher.js";
import { CommandType, CompressionType, ServerError } from "../commands/enums.js";
import type { CommandSendError, CommandSendReceipt, MessageMetadata } from "../commands/shapes.js";
import { compressionType, loadCodecs } from "../compression.js";
import type { Connection, ProducerHandler } from "../connection.js";
import { closedError, serverFailure } from "../errors.js";
import { DEFAULT_MAX_MESSAGE_SIZE } from "../frame.js";
import type { ClientHost } from "../host.js";
import type { MessageId } from "../messageId.js";
import { type Batch, BatchContainer } from "./batchContainer.js";
import { batchPayload } from "./batchPayload.js";
import { compressPayload, type SendFields, sendFrame, tooLarge } from "./entryFrame.js";
import { applyMessageFields } from "./messageFields.js";
import { type OpSend, PendingSends, rejectAll, type Waiters } from "./pendingSends.js";
import { producerCommand } from "./producerCommand.js";
import type { OutgoingMessage, ProducerOptions } from "./producerOptions.js";

type State = "connecting" | "ready" | "closing" | "closed" | "failed";

function copyOf(payload: Uint8Array): (frame: Buffer, at: number) => void {
  return (frame, at) => frame.set(payload, at);
}

/** A producer on one topic or one partition. */
export class PartitionProducer implements ProducerHandler {
  #state: State = "connecting";
  #connection: Connection | undefined;
  readonly #producerId: number;
  #producerName: string | undefined;
  #sequence = 0n;
  #sequenceAssigned = false;
  #maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE;
  readonly #pending = new PendingSends();
  /** Undefined when batching is off. */
  readonly #batches: BatchContainer | undefined;
  readonly #timeoutTimer: NodeJS.Timeout | undefined;
  readonly #attacher: Attacher;
  #failure: Error | undefined;
  readonly #compression: number;
  /** How many times this producer attached to a broker (1 after creation). */
  connects = 0;

  readonly #options: ProducerOptions;

  constructor(
    host: ClientHost,
    readonly topic: string,
    readonly partition: number,
    options: ProducerOptions,
  ) {
    this.#options = options;
    this.#producerId = host.newProducerId();
    this.#producerName = options.producerName;
    this.#compression = compressionType(options.compression ?? "NONE");
    this.#batches =
      options.batching === false
        ? undefined
        : new BatchContainer(
            {
              maxMessages: options.batching?.maxMessages ?? 1000,
              maxBytes: options.batching?.maxBytes ?? 128 * 1024,
              maxDelayMs: options.batching?.maxDelayMs ?? 1,
              keyBased: options.batching?.keyBased ?? false,
            },
            (batch, key) => this.#sendBatch(batch, key),
          );
    const sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    if (sendTimeoutMs > 0) {
      this.#timeoutTimer = setInterval(
        () => this.#failExpired(sendTimeoutMs),
        Math.max(50, Math.min(1000, sendTimeoutMs / 4)),
      );
      this.#timeoutTimer.unref();
    }
    const target: AttachTarget = {
      topic,
      // Closing still attaches: what is pending must reach the broker before the producer closes.
      finished: () => this.#state === "closed" || this.#state === "failed",
      request: (connection) => this.#register(connection),
      fail: (error) => this.#fail(error),
    };
    // The previous incarnation may still hold the name for a moment after a disconnect.
    this.#attacher = new Attacher(host, target, ServerError.ProducerBusy);
  }

  /** The name the broker knows this producer by. */
  get name(): string | undefined {
    return this.#producerName;
  }

  /** Connects for the first time; rejects when the broker refuses or the operation times out. */
  async start(): Promise<void> {
    await loadCodecs();
    await this.#attacher.start();
  }

  async #register(connection: Connection): Promise<Attachment> {
    const requestId = connection.newRequestId();
    connection.registerProducer(this.#producerId, this);
    let answer: Awaited<ReturnType<Connection["request"]>>;
    try {
      answer = await connection.request(
        requestId,
        producerCommand(this.#options, {
          topic: this.topic,
          producerId: this.#producerId,
          requestId,
          producerName: this.#producerName,
          epoch: BigInt(this.connects),
        }),
        `create producer on ${this.topic}`,
      );
    } catch (error) {
      connection.unregisterProducer(this.#producerId);
      throw error;
    }
    const success = answer.producerSuccess!;
    return {
      release: () => connection.unregisterProducer(this.#producerId),
      commit: () => {
        this.#producerName = success.producerName;
        // With deduplication the broker remembers the last sequence id under this name; continue
        // after it.
        const last = success.lastSequenceId;
        if (!this.#sequenceAssigned && last !== undefined && last >= 0n) this.#sequence = last + 1n;
        this.#connection = connection;
        this.#maxMessageSize = connection.maxMessageSize;
        this.connects++;
        if (this.#state === "connecting") this.#state = "ready";
        // Everything waiting for a receipt goes again, in order; the broker drops what it already
        // has when deduplication is on, and otherwise the receipt order still matches.
        for (const op of this.#pending) this.#write(op);
      },
    };
  }

  /** Queues a message; resolves with its id once the broker confirms it is stored. */
  send(message: OutgoingMessage): Promise<MessageId> {
    if (this.#state === "closing" || this.#state === "closed")
      return Promise.reject(closedError(`producer on ${this.topic}`));
    if (this.#failure) return Promise.reject(this.#failure);
    // The broker drops the whole connection on an oversized frame: refuse here, before any byte goes.
    if (message.payload.length > this.#maxMessageSize)
      return Promise.reject(tooLarge(message.payload.length, this.#maxMessageSize, this.topic));
    return new Promise<MessageId>((resolve, reject) => {
      if (this.#batches === undefined || message.deliverAt !== undefined) {
        // Order holds across kinds: what is batched so far goes first.
        this.flushBatches();
        this.#sendSingle(message, { resolves: [resolve], rejects: [reject] });
      } else {
        this.#batches.add(message, resolve, reject, this.#maxMessageSize);
      }
    });
  }

  /** Sends every open batch now (in the order their first messages came). */
  flushBatches(): void {
    this.#batches?.flush();
  }

  #nextSequence(count: number): bigint {
    const first = this.#sequence;
    this.#sequence += BigInt(count);
    this.#sequenceAssigned = true;
    return first;
  }

  #metadataBase(sequenceId: bigint): MessageMetadata {
    return {
      producerName: this.#producerName ?? "",
      sequenceId,
      publishTime: Date.now(),
    };
  }

  #sendSingle(message: OutgoingMessage, waiters: Waiters): void {
    const sequenceId = this.#nextSequence(1);
    const metadata = this.#metadataBase(sequenceId);
    applyMessageFields(metadata, message);
    if (message.deliverAt !== undefined) metadata.deliverAtTime = message.deliverAt;
    const payload = compressPayload(this.#compression, metadata, message.payload);
    if (payload instanceof Error) {
      rejectAll(waiters, payload);
      return;
    }
    this.#enqueue(waiters, metadata, payload.length, copyOf(payload), {
      sequenceId,
      highestSequenceId: sequenceId,
      numMessages: 1,
      batched: false,
    });
  }

  #sendBatch(batch: Batch, key: string): void {
    const messages = batch.messages;
    const count = messages.length;
    if (count === 0) return;
    const first = this.#nextSequence(count);
    const send: SendFields = {
      sequenceId: first,
      highestSequenceId: first + BigInt(count - 1),
      numMessages: count,
      batched: true,
    };
    const entries = batchPayload(messages, first);
    const metadata = this.#metadataBase(first);
    metadata.numMessagesInBatch = count;
    metadata.highestSequenceId = send.highestSequenceId;
    // A key-based batch carries its key outside too: the broker routes the entry by it.
    const head = messages[0]!;
    if (this.#batches?.limits.keyBased && key !== "") {
      if (head.key !== undefined) metadata.partitionKey = head.key;
      if (head.orderingKey !== undefined) metadata.orderingKey = head.orderingKey;
    }
    // The payloads stay with the batch, not with the entry waiting for its receipt.
    const waiters: Waiters = { resolves: batch.resolves, rejects: batch.rejects };
    if (this.#compression === CompressionType.NONE) {
      this.#enqueue(waiters, metadata, entries.length, entries.write, send);
      return;
    }
    const raw = Buffer.allocUnsafe(entries.length);
    entries.write(raw, 0);
    const payload = compressPayload(this.#compression, metadata, raw);
    if (payload instanceof Error) {
      rejectAll(waiters, payload);
      return;
    }
    this.#enqueue(waiters, metadata, payload.length, copyOf(payload), send);
  }

  /** Builds the entry's frame and queues it for its receipt; sends it at once when attached. */
  #enqueue(
    waiters: Waiters,
    metadata: MessageMetadata,
    payloadLength: number,
    writePayload: (frame: Buffer, at: number) => void,
    send: SendFields,
  ): void {
    const frame = sendFrame(
      this.#producerId,
      send,
      metadata,
      payloadLength,
      writePayload,
      this.#maxMessageSize,
      this.topic,
    );
    if (frame instanceof Error) {
      rejectAll(waiters, frame);
      return;
    }
    const op: OpSend = {
      sequenceId: send.sequenceId,
      highestSequenceId: send.highestSequenceId,
      numMessages: send.numMessages,
      batched: send.batched,
      frame,
      waiters,
      createdAt: Date.now(),
    };
    this.#pending.push(op);
    if (this.#state === "ready" || this.#state === "closing") this.#write(op);
  }

  #write(op: OpSend): void {
    this.#connection?.sendFrame(op.frame);
  }

  onSendReceipt(receipt: CommandSendReceipt): void {
    const op = this.#pending.oldest();
    if (op === undefined || receipt.sequenceId < op.sequenceId) return; // for an entry already settled
    if (receipt.sequenceId > op.sequenceId) {
      // A receipt past the oldest entry: the two sides disagree on what was sent. Start over on a
      // new connection, which resends everything pending in order.
      this.#connection?.close(
        new RustStreamError(
          "broker-failure",
          `producer on ${this.topic}: receipt for sequence ${receipt.sequenceId} while ${op.sequenceId} was expected`,
        ),
      );
      return;
    }
    this.#pending.confirm(receipt.messageId, this.partition);
  }

  onSendError(error: CommandSendError): void {
    if (error.error === ServerError.ChecksumError) {
      // The bytes were damaged on the way; sending them again (after a reconnect) can succeed.
      this.#connection?.close(serverFailure(`send on ${this.topic}`, error.error, error.message));
      return;
    }
    const op = this.#pending.oldest();
    if (op === undefined || op.sequenceId !== error.sequenceId) return;
    this.#pending.refuse(serverFailure(`send on ${this.topic}`, error.error, error.message));
  }

  onClosedByBroker(): void {
    // A topic unloaded or moved: attached again at once, reported only if that fails.
    this.#disconnected(undefined);
  }

  onConnectionClosed(error: Error): void {
    this.#disconnected(error.message);
  }

  /** `reason`: why the connection went, when it was the connection and not the broker's close. */
  #disconnected(reason: string | undefined): void {
    this.#connection = undefined;
    if (this.#state === "ready") this.#state = "connecting";
    this.#attacher.lost(reason);
  }

  #fail(error: Error): void {
    this.#failure = error;
    this.#state = "failed";
    this.flushBatches();
    this.#pending.rejectAll(error);
    this.#shutdownTimers();
  }

  #failExpired(timeoutMs: number): void {
    this.#pending.expire(
      timeoutMs,
      () =>
        new RustStreamError(
          "timeout",
          `send on ${this.topic}: no receipt within ${timeoutMs} ms (${this.#state === "ready" ? "the broker did not confirm" : "not connected"})`,
        ),
    );
  }

  /** Sends what is batched and resolves once every entry sent so far is confirmed or failed. */
  flush(): Promise<void> {
    this.flushBatches();
    return this.#pending.drained();
  }

  /** How many entries wait for a receipt. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /** Flushes, waits for the receipts, and closes the producer on the broker. */
  async close(): Promise<void> {
    if (this.#state === "closed" || this.#state === "closing") return;
    this.#attacher.close();
    if (this.#state !== "failed") {
      this.#state = "closing";
      await this.flush();
    }
    this.#state = "closed";
    this.#shutdownTimers();
    const connection = this.#connection;
    this.#connection = undefined;
    this.#pending.rejectAll(closedError(`producer on ${this.topic}`));
    if (connection && !connection.closed) {
      connection.unregisterProducer(this.#producerId);
      const requestId = connection.newRequestId();
      await connection
        .request(
          requestId,
          {
            type: CommandType.CLOSE_PRODUCER,
            closeProducer: { producerId: this.#producerId, requestId },
          },
          `close producer on ${this.topic}`,
        )
        .catch(() => undefined); // closing anyway; the broker drops it with the connection at worst
    }
  }

  #shutdownTimers(): void {
    if (this.#timeoutTimer !== undefined) clearInterval(this.#timeoutTimer);
    this.#batches?.stop();
  }
}

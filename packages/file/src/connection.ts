import { rmSync } from "node:fs";
import {
  type ClosedBroker,
  type ConnectedBroker,
  type ConnectionListener,
  type DescribesServer,
  type OutgoingMessage,
  type RawMessage,
  type Receipt,
  RustStreamError,
  type ServerDescription,
} from "@ruststream/core";
import {
  assertPayloadBytes,
  type Backlog,
  brokerMark,
  type Coordinator,
  describeMark,
  type Injection,
  partitionKeyBytes,
  type TeardownFacts,
  TestableConnection,
  wireHeaders,
} from "@ruststream/core/broker";
import { COPY_OF_HEADER, PARTITION_KEY_HEADER } from "./names.js";
import { describeFile, type FileBrokerOptions, invalid } from "./options.js";
import type { FilePublisher, PublisherHost } from "./publisher.js";
import { FilePublish } from "./publishPolicy.js";
import { FileStream } from "./sources.js";
import { formatCopyOrigin } from "./stream/copyOrigin.js";
import { FileDelivery } from "./stream/streamDelivery.js";
import { type FileHost, FileSubscription } from "./stream/streamSubscription.js";
import { encodeEnvelope } from "./wire/envelope.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./wire/format/constants.js";
import { fileErrorDetail, wrapFileError } from "./wire/format/errors.js";
import { isValidStreamKey } from "./wire/format/streamKey.js";
import { type SendReceipt, SharedWriter } from "./wire/io/sharedWriter.js";

/**
 * What shutting down a file connection left behind: `unflushed` is always 0 (a publish resolves only
 * once its bytes are written), and `returnedDeliveries` counts what named consumers had handed out,
 * or requeued, and not settled: left open in their stored positions, so the next subscription under
 * each name delivers them again (an unnamed consumer keeps no position: none of its go back).
 */
export interface ClosedFileBroker extends ClosedBroker {
  /** Whether the end-of-stream marker was written (`endWithEos`). */
  readonly endedWithEos: boolean;
}

interface InProcess {
  readonly dir: string;
  readonly coordinator: Coordinator;
}

/** A connection to a {@link FileBroker}'s file. */
export class ConnectedFileBroker
  extends TestableConnection<FileStream, ClosedFileBroker, never, FileSubscription>
  implements
    ConnectedBroker<FileStream, FileDelivery, FilePublisher, ClosedFileBroker>,
    FileHost,
    PublisherHost,
    DescribesServer
{
  readonly [brokerMark] = "file";
  readonly [describeMark] = true as const;
  readonly backlog: Backlog = "missed";
  /** The file read and written: the configured one, or a private temporary one in process. */
  readonly path: string;
  readonly #options: FileBrokerOptions;
  readonly #inProcess: InProcess | undefined;
  #writer: SharedWriter | undefined;

  constructor(
    options: FileBrokerOptions,
    path: string,
    inProcess: InProcess | undefined,
    onState: ConnectionListener | undefined,
  ) {
    // Every connection injects (an injection is an append, which any writer of the file makes);
    // only an in-process one records for published().
    super(
      { label: "file", accepts: "a name or FileStream" },
      { log: inProcess === undefined ? undefined : new Map() },
      onState,
    );
    this.#options = options;
    this.path = path;
    this.#inProcess = inProcess;
  }

  get coordinator(): Coordinator | undefined {
    return this.#inProcess?.coordinator;
  }

  /** The largest message written or read (FileHost): readers stop at a frame declaring more. */
  get maxMessageBytes(): number {
    return this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  source(name: string): FileStream {
    const consumer = this.#options.consumer;
    return new FileStream(name, consumer === undefined ? {} : { consumer });
  }

  async subscribe(source: string | FileStream): Promise<FileSubscription> {
    this.assertOpen();
    return this.adopt(await FileSubscription.open(this, this.descriptorOf(source)));
  }

  defaultPublishPolicy(): FilePublish {
    return new FilePublish();
  }

  describeServer(): ServerDescription {
    return describeFile(this.#options.path);
  }

  /** Written at once (a synchronous append), then counted for the coordinator once delivered. */
  protected prepareInjection(message: OutgoingMessage): Injection {
    const { wire, raw } = this.#prepare(message);
    let receipt: SendReceipt;
    try {
      receipt = this.#acquireWriter().sendNow(message.name, wire);
    } catch (error) {
      throw refusal(error, message.name);
    }
    return { raw, deliver: () => this.#counted(message.name, receipt) };
  }

  // PublisherHost
  async append(message: OutgoingMessage): Promise<Receipt> {
    const { wire, raw } = this.#prepare(message);
    const writer = this.#acquireWriter();
    let queued: { receipt: SendReceipt; written: Promise<SendReceipt> };
    try {
      queued = writer.enqueue(message.name, wire);
    } catch (error) {
      throw refusal(error, message.name);
    }
    // Counted before the bytes exist, so no reader can take it uncounted.
    this.record(raw);
    this.#counted(message.name, queued.receipt);
    const receipt = await queued.written.catch((error: unknown) => {
      throw refusal(error, message.name);
    });
    return { name: message.name, position: receipt.seq.toString() };
  }

  protected async teardown(): Promise<TeardownFacts<ClosedFileBroker>> {
    const writer = this.#writer;
    this.#writer = undefined;
    let endedWithEos = false;
    if (writer) {
      try {
        if (this.#options.endWithEos && !writer.ended) {
          await writer.end();
          endedWithEos = true;
        } else if (!writer.ended) {
          await writer.flush();
        }
      } catch {
        // The writer failed earlier; its sends were rejected then. Closing still frees the lock.
      } finally {
        writer.release();
      }
    }
    if (this.#inProcess) rmSync(this.#inProcess.dir, { recursive: true, force: true });
    return { unflushed: 0, endedWithEos };
  }

  // FileHost (assertOpen and forget come from ConnectionBase)

  #acquireWriter(): SharedWriter {
    if (this.#writer) return this.#writer;
    try {
      this.#writer = SharedWriter.acquire(this.path, {
        ...(this.#options.beaconInterval === undefined
          ? {}
          : { beaconInterval: this.#options.beaconInterval }),
        maxMessageBytes: this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      });
    } catch (error) {
      throw wrapFileError(
        "broker-failure",
        `cannot publish to ${this.path}: ${(error as Error).message}`,
        error,
      );
    }
    return this.#writer;
  }

  /** Validates and encodes before anything is written: a refused message writes nothing. */
  #prepare(message: OutgoingMessage): { wire: Uint8Array; raw: RawMessage } {
    this.assertOpen();
    if (typeof message.name !== "string" || !isValidStreamKey(message.name)) {
      throw invalid(
        `"${String(message.name)}" is not a stream key: publish to a name of 1 to 249 characters of A-Z a-z 0-9 . _ -`,
      );
    }
    assertPayloadBytes(message);
    if (message.options !== undefined) {
      throw new RustStreamError(
        "unsupported",
        "the file broker has no per-message publish options: remove options from the message",
      );
    }
    const headers = wireHeaders(message, PARTITION_KEY_HEADER);
    // A retry copy or dead letter of a named consumer's message of this file records that message:
    // the runtime acks it only after this write, and a restart before its position is stored finds
    // the copy and does not deliver the message again (no second copy, no second dead letter).
    // Only such a copy carries it: one cloned from a delivery's headers onto anything else is cut.
    headers.delete(COPY_OF_HEADER);
    const origin =
      message.replacesCause === true && message.cause instanceof FileDelivery
        ? message.cause.copyOrigin
        : undefined;
    if (origin !== undefined && origin.path === this.path) {
      headers.set(COPY_OF_HEADER, formatCopyOrigin(origin));
    }
    const wire = encodeEnvelope(message.payload, headers);
    const max = this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (wire.length > max) {
      throw new RustStreamError(
        "publish-refused",
        `a message of ${wire.length} bytes for "${message.name}" (headers included) is over the file broker's maxMessageBytes (${max}); raise it in the FileBroker options`,
      );
    }
    const key = message.partitionKey;
    const raw: RawMessage = {
      name: message.name,
      payload: message.payload,
      headers,
      partitionKey: key === undefined ? undefined : partitionKeyBytes(key),
    };
    return { wire, raw };
  }

  /** An append, counted for an in-process coordinator by every subscription to its stream key. */
  #counted(name: string, receipt: SendReceipt): void {
    if (this.#inProcess === undefined) return;
    for (const s of this.subscriptions) if (s.name === name) s.count(receipt.offset);
  }
}

function refusal(error: unknown, name: string): unknown {
  const detail = fileErrorDetail(error);
  if (detail === undefined) return error;
  // A publish the format refuses for its size is the caller's to fix; anything else the file did.
  const code = detail.code === "PAYLOAD_TOO_LARGE" ? "publish-refused" : "broker-failure";
  return wrapFileError(code, `publishing to "${name}" failed: ${(error as Error).message}`, error);
}

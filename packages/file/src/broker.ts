import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import {
  type Broker,
  type ClosedBroker,
  type ConnectedBroker,
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
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  partitionKeyBytes,
  type TeardownFacts,
  TestableConnection,
  wireHeaders,
} from "@ruststream/core/broker";
import { COPY_OF_HEADER, PARTITION_KEY_HEADER, PRIME_STREAM_KEY } from "./names.js";
import { FilePublish, type FilePublisher, type PublisherHost } from "./publisher.js";
import { FileStream } from "./sources.js";
import { formatCopyOrigin } from "./stream/copyOrigin.js";
import { FileDelivery } from "./stream/streamDelivery.js";
import { type FileHost, FileSubscription } from "./stream/streamSubscription.js";
import { encodeEnvelope } from "./wire/envelope.js";
import {
  DEFAULT_BEACON_INTERVAL,
  DEFAULT_MAX_MESSAGE_BYTES,
  HEADER_SIZE,
} from "./wire/format/constants.js";
import { fileErrorDetail, wrapFileError } from "./wire/format/errors.js";
import { decodeHeader } from "./wire/format/header.js";
import { isValidStreamKey } from "./wire/format/streamKey.js";
import { fileReader } from "./wire/io/fileReader.js";
import { type SendReceipt, SharedWriter } from "./wire/io/sharedWriter.js";

export interface FileBrokerOptions {
  /** The `.ss` file; created (with its folder) on connect unless `existingOnly`. */
  readonly path: string;
  /**
   * The consumer name a bare subscriber name subscribes as. With it, `b.subscriber("orders")` is a
   * durable `tracked` consumer that resumes after a restart; without it, a bare name reads live
   * from the end and keeps no position.
   */
  readonly consumer?: string;
  /** Bytes between beacons in a new file: a positive multiple of 1024 (default 1 MiB). */
  readonly beaconInterval?: number;
  /** The largest message a publish writes, header envelope included (default 16 MiB). */
  readonly maxMessageBytes?: number;
  /** Fail to connect when the file does not exist, instead of creating it. */
  readonly existingOnly?: boolean;
  /** Write the end-of-stream marker at shutdown, so replays of the file complete. */
  readonly endWithEos?: boolean;
}

function invalid(message: string): RustStreamError {
  return new RustStreamError("invalid-argument", message);
}

/**
 * A broker with no server: RustStream's file broker over a SeaStreamer `.ss` file, which Rust
 * services using `sea-streamer-file` or RustStream's file broker can share. The constructor only
 * records configuration.
 */
export class FileBroker
  implements Broker<ConnectedFileBroker>, InProcessBroker<ConnectedFileBroker>, DescribesServer
{
  readonly [brokerMark] = "file";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly options: FileBrokerOptions;

  constructor(options: FileBrokerOptions) {
    if (typeof options?.path !== "string" || options.path.length === 0) {
      throw invalid('FileBroker needs a path: new FileBroker({ path: "data/app.ss" })');
    }
    const interval = options.beaconInterval ?? DEFAULT_BEACON_INTERVAL;
    if (!Number.isSafeInteger(interval) || interval <= 0 || interval % 1024 !== 0) {
      throw invalid(`beaconInterval ${interval}: give a positive multiple of 1024 bytes`);
    }
    const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw invalid(`maxMessageBytes ${max}: give a whole number of bytes, 1 or more`);
    }
    // Checked now, so a bad name fails where the broker is built, not at the first subscribe.
    if (options.consumer !== undefined) new FileStream("x", { consumer: options.consumer });
    this.options = options;
  }

  /** The file, by its name only, before anything is opened. */
  describeServer(): ServerDescription {
    return describeFile(this.options.path);
  }

  async connect(): Promise<ConnectedFileBroker> {
    prepareFile(this.options.path, this.options);
    return new ConnectedFileBroker(this.options, this.options.path, undefined);
  }

  /**
   * The same broker over a private temporary file (removed at shutdown), counting for the test's
   * coordinator: every setting but the path is the production one, so it refuses what the real
   * file refuses, and no test writes the service's real data file.
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedFileBroker> {
    const dir = mkdtempSync(join(tmpdir(), "ruststream-file-inprocess-"));
    const path = join(dir, basename(this.options.path));
    prepareFile(path, { ...this.options, existingOnly: false });
    return new ConnectedFileBroker(this.options, path, { dir, coordinator: options.coordinator });
  }
}

/** Docs name the file, not where it lives: a path can say more about a host than docs should. */
function describeFile(path: string): ServerDescription {
  return { protocol: "file", description: `SeaStreamer stream file ${basename(path)}` };
}

/**
 * Makes sure the file exists and is a stream file. A new one is primed, as RustStream does, with
 * one message on the internal key `ruststream-internal` (readers skip it).
 */
function prepareFile(path: string, options: FileBrokerOptions): void {
  const size = existsSync(path) ? statSync(path).size : -1;
  if (size < 0 && options.existingOnly) {
    throw invalid(
      `${path} does not exist and existingOnly is set: create it first, or drop existingOnly`,
    );
  }
  if (size > HEADER_SIZE) {
    const fd = openSync(path, "r");
    try {
      decodeHeader(fileReader(fd).read(0, HEADER_SIZE));
    } catch (error) {
      throw wrapFileError("invalid-argument", `${path}: ${(error as Error).message}`, error);
    } finally {
      closeSync(fd);
    }
    return;
  }
  let writer: SharedWriter;
  try {
    writer = SharedWriter.acquire(path, {
      ...(options.beaconInterval === undefined ? {} : { beaconInterval: options.beaconInterval }),
      ...(options.maxMessageBytes === undefined
        ? {}
        : { maxMessageBytes: options.maxMessageBytes }),
    });
  } catch (error) {
    // Another process writes it: that process primes it.
    if (fileErrorDetail(error)?.code === "FILE_LOCKED") return;
    throw wrapFileError("invalid-argument", `${path}: ${(error as Error).message}`, error);
  }
  try {
    writer.sendNow(PRIME_STREAM_KEY, new TextEncoder().encode("1"));
  } finally {
    writer.release();
  }
}

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

  constructor(options: FileBrokerOptions, path: string, inProcess: InProcess | undefined) {
    // Every connection injects (an injection is an append, which any writer of the file makes);
    // only an in-process one records for published().
    super(
      { label: "file", accepts: "a name or FileStream" },
      { log: inProcess === undefined ? undefined : new Map() },
    );
    this.#options = options;
    this.path = path;
    this.#inProcess = inProcess;
  }

  get coordinator(): Coordinator | undefined {
    return this.#inProcess?.coordinator;
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

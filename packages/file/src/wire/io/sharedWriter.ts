import {
  closeSync,
  existsSync,
  fsync,
  ftruncateSync,
  mkdirSync,
  openSync,
  writevSync,
} from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { RustStreamError } from "@ruststream/core";
import { concatBytes } from "../format/bytes.js";
import {
  DEFAULT_BEACON_INTERVAL,
  DEFAULT_MAX_MESSAGE_BYTES,
  HEADER_SIZE,
} from "../format/constants.js";
import { FileEncoder } from "../format/encoder.js";
import { fileError } from "../format/errors.js";
import { validateBeaconInterval } from "../format/header.js";
import { findResumePoint, type ResumePoint, recoverStreams } from "../format/resume.js";
import { validateStreamKey } from "../format/streamKey.js";
import type { StreamState } from "../format/types.js";
import { signalAppend } from "./appendSignal.js";
import { fileReader } from "./fileReader.js";
import { acquireLock, type FileLock } from "./lockFile.js";
import { type Pending, PendingValue } from "./pendingWrite.js";

export interface WriterOptions {
  /** Bytes between beacons for a new file (default 1 MiB); an existing file keeps its own. */
  readonly beaconInterval?: number;
  /** Sends of a larger payload fail with `PAYLOAD_TOO_LARGE` (default 16 MiB). */
  readonly maxMessageBytes?: number;
  /** Refuse to create the file when it does not exist (default: create it). */
  readonly existingOnly?: boolean;
}

/** What a send resolves to once its bytes are handed to the operating system. */
export interface SendReceipt {
  readonly streamKey: string;
  /** Always 0, as upstream's producer writes. */
  readonly shard: bigint;
  /** Per stream key, from 1, continuing across reopenings of the file. */
  readonly seq: bigint;
  /** Milliseconds since the epoch, as written in the frame. */
  readonly timestamp: number;
  /** File offset of the frame's first byte. */
  readonly offset: number;
}

/** One message of a run (`enqueueRun`). */
export interface RunMessage {
  readonly streamKey: string;
  readonly payload: Uint8Array;
}

const writers = new Map<string, SharedWriter>();

/**
 * The one writer of a file in this process: every producer on the path shares it (so sequence
 * numbers and beacons stay consistent), and it holds the cross-process lock while any producer
 * is open. Sends are encoded at once, in call order, and written together at the end of the
 * current turn of the event loop, so a burst costs one system call.
 */
export class SharedWriter {
  readonly path: string;
  readonly beaconInterval: number;
  readonly maxMessageBytes: number;
  readonly #fd: number;
  readonly #lock: FileLock;
  /** Replaced when the writer resumes after a failed write. */
  #encoder: FileEncoder;
  /** Where the file was resumed (undefined for a new file): stream states are recovered from it lazily. */
  #resumed: ResumePoint | undefined;
  readonly #recovered = new Set<string>();
  #queue: Pending[] = [];
  #scheduled = false;
  #users = 0;
  #failure: RustStreamError | undefined;
  #ended = false;

  private constructor(
    path: string,
    fd: number,
    lock: FileLock,
    encoder: FileEncoder,
    resumed: ResumePoint | undefined,
    maxMessageBytes: number,
  ) {
    this.path = path;
    this.#fd = fd;
    this.#lock = lock;
    this.#encoder = encoder;
    this.#resumed = resumed;
    this.beaconInterval = encoder.beaconInterval;
    this.maxMessageBytes = maxMessageBytes;
  }

  /** The writer of `path`, opened (locked, resumed or created) on first use. Pair with `release`. */
  static acquire(path: string, options: WriterOptions = {}): SharedWriter {
    const key = resolve(path);
    let writer = writers.get(key);
    if (writer === undefined) {
      writer = SharedWriter.#open(key, options);
      writers.set(key, writer);
    }
    writer.#users++;
    return writer;
  }

  static #open(path: string, options: WriterOptions): SharedWriter {
    const interval = options.beaconInterval ?? DEFAULT_BEACON_INTERVAL;
    validateBeaconInterval(interval);
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (options.existingOnly) {
      if (!existsSync(path)) throw missingFile(path);
    } else {
      // A service configured with `data/orders.ss` expects its folder to appear with the file.
      mkdirSync(dirname(path), { recursive: true });
    }
    const lock = acquireLock(path);
    let fd: number | undefined;
    try {
      fd = openFile(path, options.existingOnly ?? false);
      const reader = fileReader(fd);
      // Throws for a file that is not .ss before a single byte is written.
      const point = findResumePoint(reader, { maxMessageBytes });
      let encoder: FileEncoder;
      let first: Uint8Array;
      if (point === undefined) {
        const created = FileEncoder.create(
          { fileName: basename(path), createdAt: Date.now(), beaconInterval: interval },
          { maxMessageBytes },
        );
        encoder = created.encoder;
        first = created.bytes;
        ftruncateSync(fd, 0);
      } else {
        // Whatever follows the last good frame (an end-of-stream marker, a torn tail) goes: the
        // next frame starts exactly there, as upstream would write it, minus its stale leftovers.
        if (point.staleBytes > 0) ftruncateSync(fd, point.offset);
        const resumed = FileEncoder.resume(point.header.beaconInterval, point.offset, {
          maxMessageBytes,
        });
        encoder = resumed.encoder;
        first = resumed.bytes;
      }
      const writer = new SharedWriter(path, fd, lock, encoder, point, maxMessageBytes);
      if (first.length > 0) writer.#writeAll([first]);
      return writer;
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      lock.release();
      throw error;
    }
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Encodes now (validating first: a refused message writes nothing), writes at the end of this turn. */
  send(
    streamKey: string,
    payload: Uint8Array,
    timestamp: number = Date.now(),
  ): Promise<SendReceipt> {
    return this.enqueue(streamKey, payload, timestamp).written;
  }

  /**
   * Like `send`, with the receipt known at once (sequence and offset are fixed when encoding), for
   * callers that must account for the message before any reader can see it.
   */
  enqueue(
    streamKey: string,
    payload: Uint8Array,
    timestamp: number = Date.now(),
  ): { receipt: SendReceipt; written: Promise<SendReceipt> } {
    this.#assertUsable();
    this.#check(streamKey, payload);
    const { bytes, receipt } = this.#frame(streamKey, payload, timestamp);
    const written = new Promise<SendReceipt>((resolve, reject) => {
      this.#queue.push(new PendingValue(bytes, receipt, resolve, reject));
    });
    this.#schedule();
    return { receipt, written };
  }

  /**
   * Writes `messages` as one run of frames, nothing of anyone else's between them: a transaction's
   * commit. `build` makes them knowing the file offset where the run begins (which a transaction's
   * marks carry). Everything is checked before a frame is encoded, so a run refused writes nothing;
   * `written` resolves once every byte of the run is written, and rejects if any did not make it
   * (a frame of the run written whole before a failure is no message on its own).
   */
  enqueueRun(
    build: (start: number) => readonly RunMessage[],
    timestamp: number = Date.now(),
  ): { receipts: SendReceipt[]; written: Promise<SendReceipt[]> } {
    this.#assertUsable();
    const messages = build(this.#encoder.offset);
    for (const m of messages) this.#check(m.streamKey, m.payload);
    // Each key's state is read from the file before the first frame is encoded: a read that fails
    // fails the run, never the middle of it.
    for (const m of messages) this.#stateOf(m.streamKey);
    const chunks: Uint8Array[] = [];
    const receipts: SendReceipt[] = [];
    for (const m of messages) {
      const { bytes, receipt } = this.#frame(m.streamKey, m.payload, timestamp);
      chunks.push(bytes);
      receipts.push(receipt);
    }
    const bytes = concatBytes(chunks);
    const written = new Promise<SendReceipt[]>((resolve, reject) => {
      this.#queue.push(new PendingValue(bytes, receipts, resolve, reject));
    });
    this.#schedule();
    return { receipts, written };
  }

  /** Encodes and writes at once, after anything queued: for a test's synchronous injection. */
  sendNow(streamKey: string, payload: Uint8Array, timestamp: number = Date.now()): SendReceipt {
    this.#assertUsable();
    this.#check(streamKey, payload);
    const { bytes, receipt } = this.#frame(streamKey, payload, timestamp);
    this.#queue.push({ bytes, resolve: () => {}, reject: () => {} });
    this.#drain();
    if (this.#failure) throw this.#failure;
    return receipt;
  }

  /** Makes everything sent so far durable (fsync). */
  async flush(): Promise<void> {
    this.#drain();
    if (this.#failure) throw this.#failure;
    await new Promise<void>((resolve, reject) => {
      fsync(this.#fd, (error) => (error ? reject(ioError("fsync", this.path, error)) : resolve()));
    });
  }

  /** Writes the end-of-stream marker and makes the file durable; later sends are refused. */
  async end(): Promise<void> {
    this.#assertUsable();
    const bytes = this.#encoder.end(Date.now());
    this.#queue.push({ bytes, resolve: () => {}, reject: () => {} });
    this.#drain();
    this.#ended = true;
    await this.flush();
  }

  /** One producer is done with the writer; the last one closes the file and frees the lock. */
  release(): void {
    if (--this.#users > 0) return;
    this.#drain();
    writers.delete(this.path);
    closeSync(this.#fd);
    this.#lock.release();
  }

  #assertUsable(): void {
    if (this.#failure) this.#resumeAfterFailure();
    if (this.#ended) {
      throw fileError(
        "PRODUCER_CLOSED",
        `${this.path} was ended (end-of-stream written): open a new producer to append again`,
      );
    }
  }

  /**
   * A failed write (a full disk, an I/O error) may have left part of a frame at the tail, and the
   * encoder counted frames the file does not hold. The next send resumes as a new writer would: the
   * tail after the last complete frame is cut, the stream states are recovered from the file again,
   * and writing goes on where the file really ends. So a disk that fills up and is freed again costs
   * the sends that failed (each rejected: the caller may send again), not the connection. While the
   * cause lasts the send fails again, with the new error.
   */
  #resumeAfterFailure(): void {
    const reader = fileReader(this.#fd);
    this.#recovered.clear();
    if (reader.size < HEADER_SIZE) {
      // Not even the header made it (the file's first write failed): start the file again.
      const created = FileEncoder.create(
        {
          fileName: basename(this.path),
          createdAt: Date.now(),
          beaconInterval: this.beaconInterval,
        },
        { maxMessageBytes: this.maxMessageBytes },
      );
      ftruncateSync(this.#fd, 0);
      this.#encoder = created.encoder;
      this.#resumed = undefined;
      this.#failure = undefined;
      this.#writeAll([created.bytes]);
      return;
    }
    const point = findResumePoint(reader, { maxMessageBytes: this.maxMessageBytes });
    if (point === undefined) throw this.#failure;
    if (point.staleBytes > 0) ftruncateSync(this.#fd, point.offset);
    const resumed = FileEncoder.resume(point.header.beaconInterval, point.offset, {
      maxMessageBytes: this.maxMessageBytes,
    });
    this.#encoder = resumed.encoder;
    this.#resumed = point;
    this.#failure = undefined;
    if (resumed.bytes.length > 0) this.#writeAll([resumed.bytes]);
  }

  /** Refuses, before anything is encoded, a key or a payload the file cannot take. */
  #check(streamKey: string, payload: Uint8Array): void {
    validateStreamKey(streamKey);
    if (payload.length > this.maxMessageBytes) {
      throw fileError(
        "PAYLOAD_TOO_LARGE",
        `A payload of ${payload.length} bytes for "${streamKey}" is over the limit of ${this.maxMessageBytes} bytes; raise maxMessageBytes`,
      );
    }
  }

  /** Encodes one checked message as the next frame. */
  #frame(
    streamKey: string,
    payload: Uint8Array,
    timestamp: number,
  ): { bytes: Uint8Array; receipt: SendReceipt } {
    const stream = { streamKey, shard: 0n };
    const state = this.#stateOf(streamKey);
    const seq = (state?.seq ?? 0n) + 1n;
    const offset = this.#encoder.offset;
    const bytes = this.#encoder.write({ ...stream, seq, timestamp, payload });
    return { bytes, receipt: { streamKey, shard: 0n, seq, timestamp, offset } };
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => this.#drain());
  }

  /**
   * A stream's state, recovered from the file on its first send in this session by walking the
   * beacons back (upstream does the same, lazily, per key).
   */
  #stateOf(streamKey: string): StreamState | undefined {
    const stream = { streamKey, shard: 0n };
    if (this.#resumed && !this.#recovered.has(streamKey)) {
      this.#recovered.add(streamKey);
      const reader = fileReader(this.#fd, this.#resumed.offset);
      const [found] = recoverStreams(reader, this.#resumed, [stream]);
      if (found) this.#encoder.seedStream(stream, found.state);
    }
    return this.#encoder.streamState(stream);
  }

  #drain(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    if (this.#failure) {
      for (const p of batch) p.reject(this.#failure);
      return;
    }
    const { written, error } = this.#write(batch.map((p) => p.bytes));
    let end = 0;
    for (const p of batch) {
      end += p.bytes.length;
      // A frame written whole before the failure is in the file, and readers deliver it: its send
      // succeeded (refusing it would have the sender write it twice). Only the rest failed. A run
      // is one piece: readers deliver none of it unless all of it is there.
      if (end <= written) p.resolve();
      else p.reject(error);
    }
  }

  /** Positional writes at the encoder's offsets; after a failure the next send resumes the file first. */
  #writeAll(chunks: Uint8Array[]): void {
    const { error } = this.#write(chunks);
    if (error) throw error;
  }

  /** Writes `chunks` (the bytes just encoded); answers how many bytes made it before a failure. */
  #write(chunks: Uint8Array[]): { written: number; error: RustStreamError | undefined } {
    let total = 0;
    for (const c of chunks) total += c.length;
    const end = this.#encoder.offset;
    const start = end - total;
    let position = start;
    try {
      let pending = chunks;
      while (pending.length > 0) {
        let n = writevSync(this.#fd, pending, position);
        position += n;
        const rest: Uint8Array[] = [];
        for (const c of pending) {
          if (n >= c.length) {
            n -= c.length;
            continue;
          }
          rest.push(n > 0 ? c.subarray(n) : c);
          n = 0;
        }
        pending = rest;
      }
    } catch (error) {
      this.#failure = ioError("write", this.path, error);
      if (position > start) signalAppend(this.path);
      return { written: position - start, error: this.#failure };
    }
    signalAppend(this.path);
    return { written: total, error: undefined };
  }
}

function ioError(what: string, path: string, cause: unknown): RustStreamError {
  return fileError(
    "FILE_IO",
    `Could not ${what} ${path} (${(cause as Error).message}); the next send resumes after the last complete frame`,
    undefined,
    cause,
  );
}

function openFile(path: string, existingOnly: boolean): number {
  try {
    return openSync(path, "r+");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    if (existingOnly) throw missingFile(path);
    return openSync(path, "w+");
  }
}

function missingFile(path: string): RustStreamError {
  return fileError(
    "INVALID_ARGUMENT",
    `${path} does not exist and existingOnly is set: create it first, or drop existingOnly`,
  );
}

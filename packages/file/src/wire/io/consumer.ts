import { close, type FSWatcher, fstat, open, read, watch } from "node:fs";
import type { RustStreamError } from "@ruststream/core";
import { PRIME_STREAM_KEY } from "../../names.js";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  HEADER_SIZE,
  SEA_STREAMER_INTERNAL,
} from "../format/constants.js";
import { type DecodedItem, StreamDecoder } from "../format/decoder.js";
import { fileError } from "../format/errors.js";
import { decodeHeader } from "../format/header.js";
import { locateStart } from "../format/locate.js";
import { findResumePoint } from "../format/resume.js";
import type { DecodedMessage, FileHeader } from "../format/types.js";
import { onAppend } from "./appendSignal.js";
import { fileReader } from "./fileReader.js";
import { TransactionHold } from "./transactionHold.js";

/** Where a consumer starts. */
export type ReadFrom =
  | "beginning"
  /** After the last complete message: only what is appended from now on. */
  | "end"
  /** The first message of the stream whose sequence number is at least `seq` (needs `streamKey`). */
  | { readonly seq: bigint }
  /** The first message of the stream strictly later than `timestamp` ms (needs `streamKey`). */
  | { readonly timestamp: number }
  /** A unit boundary, such as a delivered message's `end`: resuming exactly after it. */
  | { readonly offset: number };

export interface ConsumerOptions {
  readonly from?: ReadFrom;
  /** Keep waiting for appends at the end of the file (default false: stop at its end). */
  readonly follow?: boolean;
  /** Only this stream's messages. Without it, every stream but the internal ones. */
  readonly streamKey?: string;
  /** Check the bytes upstream writes but never reads (default true). */
  readonly strict?: boolean;
  /**
   * A frame declaring a larger payload stops the reader (`FRAME_TOO_LARGE`) instead of being read
   * or waited for (default 16 MiB, the writers' default): a damaged length never has the reader
   * buffer more than this, nor wait for bytes that will never come.
   */
  readonly maxMessageBytes?: number;
  /**
   * How often a follower looks at the file when nothing told it that it grew (default 1000 ms
   * while the file watcher works, 100 ms when it cannot watch).
   */
  readonly pollMs?: number;
}

const CHUNK = 1024 * 1024;

function readChunk(fd: number, position: number, length: number): Promise<Uint8Array> {
  const buffer = Buffer.allocUnsafeSlow(length);
  return new Promise((resolve, reject) => {
    read(fd, buffer, 0, length, position, (error, n) => {
      if (error) reject(error);
      else resolve(new Uint8Array(buffer.buffer, buffer.byteOffset, n));
    });
  });
}

function sizeOf(fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fstat(fd, (error, stats) => (error ? reject(error) : resolve(stats.size)));
  });
}

type Skip = ((m: DecodedMessage) => boolean) | undefined;

/**
 * Reads messages from a `.ss` file: from the beginning, the end, a sequence number or a time
 * (located through the beacons, reading a few of them rather than the file), to the end of the
 * file or, when following, on as the file grows. It ends at the end-of-stream marker.
 *
 * Damage (a frame cut short, a bad checksum) never yields garbage: every complete message before
 * it is returned, then `next()` rejects once with a `RustStreamError` (`broker-failure`, detail
 * `FILE_TRUNCATED`, `FILE_CORRUPT` or `FRAME_TOO_LARGE`) naming the offset. While following, a
 * frame cut short is waited for, since a writer may still be finishing it; one whose length the
 * next beacon contradicts, or over `maxMessageBytes`, is not.
 *
 * A RustStream transaction's frames are handed out together, once its last frame is read whole;
 * one that never gets its last frame (a crash mid-commit) is never handed out in part
 * (transactionHold.ts).
 */
export class FileConsumer implements AsyncIterable<DecodedMessage> {
  readonly path: string;
  readonly header: FileHeader;
  readonly #fd: number;
  readonly #options: ConsumerOptions;
  readonly #follow: boolean;
  readonly #pollMs: number;
  #decoder!: StreamDecoder;
  #readAt = 0;
  #queue: DecodedMessage[] = [];
  #head = 0;
  #skip: Skip;
  #damage: RustStreamError | undefined;
  /** Offset where damage was found while following and the bytes were read again once. */
  #retried: number | undefined;
  #over = false;
  #closed = false;
  #watcher: FSWatcher | undefined;
  #unlisten: (() => void) | undefined;
  #wake: (() => void) | undefined;
  #poked = false;
  #ahead: { at: number; chunk: Promise<Uint8Array> } | undefined;
  #reading: Promise<Uint8Array> | undefined;
  /** A size check in flight: the descriptor stays open until it is done. */
  #sizing: Promise<number> | undefined;
  /** Bumped by every seek, so a read begun before it is thrown away. */
  #generation = 0;
  /**
   * Just past the last message frame read (any key) outside an open transaction: a file cut below
   * it lost messages read. A cut back to an open transaction's start is its writer's doing.
   */
  #readMessagesTo = 0;
  /** Where this reader was placed (open, seek): the frames before it are not its. */
  #readFrom = 0;
  readonly #hold = new TransactionHold();

  private constructor(path: string, fd: number, header: FileHeader, options: ConsumerOptions) {
    this.path = path;
    this.#fd = fd;
    this.header = header;
    this.#options = options;
    this.#follow = options.follow ?? false;
    if (this.#follow) {
      this.#unlisten = onAppend(path, () => this.#poke());
      try {
        this.#watcher = watch(path, { persistent: false }, () => this.#poke());
        this.#watcher.on("error", () => this.#unwatch());
      } catch {
        this.#watcher = undefined;
      }
    }
    this.#pollMs = options.pollMs ?? (this.#watcher ? 1000 : 100);
  }

  /** Opens `path` for reading; throws for a missing file or one that is not `.ss`. */
  static async open(path: string, options: ConsumerOptions = {}): Promise<FileConsumer> {
    const fd = await new Promise<number>((resolve, reject) => {
      open(path, "r", (error, fd) => (error ? reject(error) : resolve(fd)));
    });
    try {
      const max = options.maxMessageBytes;
      if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
        throw fileError(
          "INVALID_ARGUMENT",
          `maxMessageBytes ${max}: give a whole number of bytes, 1 or more`,
        );
      }
      const header = decodeHeader(fileReader(fd).read(0, HEADER_SIZE), options.strict ?? true);
      const consumer = new FileConsumer(path, fd, header, options);
      consumer.#position(options.from ?? "beginning");
      return consumer;
    } catch (error) {
      close(fd, () => {});
      throw error;
    }
  }

  /** The offset just past the last message handed out (or the start position). */
  get offset(): number {
    return this.#decoder.offset;
  }

  /** Moves to `from`; messages already handed out stay valid, read-ahead is dropped. */
  seek(from: ReadFrom): void {
    this.#position(from);
  }

  /** The next message, or `undefined` at the end (end-of-stream, or end of file when not following). */
  async next(): Promise<DecodedMessage | undefined> {
    if (this.#head < this.#queue.length) return this.#shift();
    if (await this.#fill()) return this.#shift();
    return this.#end();
  }

  /** Up to `max` messages: waits for the first, adds those already read. Empty at the end. */
  async nextBatch(max: number): Promise<DecodedMessage[]> {
    const first = await this.next();
    if (first === undefined) return [];
    const batch = [first];
    while (batch.length < max && this.#head < this.#queue.length) batch.push(this.#shift());
    return batch;
  }

  /** Messages already read and waiting, without any I/O: what a batch adds to its first message. */
  takeBuffered(max: number): DecodedMessage[] {
    const out: DecodedMessage[] = [];
    while (out.length < max && this.#head < this.#queue.length) out.push(this.#shift());
    return out;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unwatch();
    this.#unlisten?.();
    this.#wake?.();
    // A read still running on the descriptor must finish before it is closed and reused.
    const fd = this.#fd;
    Promise.allSettled([this.#reading, this.#ahead?.chunk, this.#sizing]).then(() =>
      close(fd, () => {}),
    );
  }

  async *[Symbol.asyncIterator](): AsyncIterator<DecodedMessage> {
    try {
      for (;;) {
        const message = await this.next();
        if (message === undefined) return;
        yield message;
      }
    } finally {
      this.close();
    }
  }

  #shift(): DecodedMessage {
    const m = this.#queue[this.#head++]!;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    }
    return m;
  }

  #end(): undefined {
    const damage = this.#damage;
    if (damage) {
      this.#damage = undefined;
      throw damage;
    }
    return undefined;
  }

  #position(from: ReadFrom): void {
    this.#generation++;
    this.#ahead = undefined;
    this.#queue = [];
    this.#head = 0;
    this.#damage = undefined;
    this.#over = false;
    this.#skip = undefined;
    const reader = fileReader(this.#fd);
    const strict = this.#options.strict ?? true;
    let offset: number;
    if (from === "beginning") {
      offset = HEADER_SIZE;
    } else if (from === "end") {
      offset = findResumePoint(reader, { strict })?.offset ?? HEADER_SIZE;
    } else if ("offset" in from) {
      offset = from.offset;
    } else {
      const key = this.#options.streamKey;
      if (key === undefined) {
        throw fileError(
          "INVALID_ARGUMENT",
          "Reading from a sequence number or a time needs a streamKey: sequences and times are per stream",
        );
      }
      offset = locateStart(reader, this.header, key, from, strict);
      this.#skip = "seq" in from ? (m) => m.seq < from.seq : (m) => m.timestamp <= from.timestamp;
    }
    this.#readFrom = Math.max(HEADER_SIZE, offset);
    this.#hold.reset();
    this.#restart(this.#readFrom);
  }

  /**
   * Reads again from `offset`, or from where an open transaction began when that is earlier: a
   * writer reopening the file cuts a transaction left open back to its start, and writes on there.
   */
  #reread(offset: number): void {
    const open = this.#hold.openAt;
    this.#hold.reset();
    this.#restart(open === undefined ? offset : Math.min(offset, Math.max(open, this.#readFrom)));
  }

  #restart(offset: number): void {
    this.#decoder = StreamDecoder.resumeAt(this.header, offset, {
      strict: this.#options.strict ?? true,
      maxMessageBytes: this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    });
    this.#readAt = offset;
    this.#ahead = undefined;
    this.#readMessagesTo = offset;
  }

  #accept(items: DecodedItem[]): void {
    for (const item of items) {
      if (item.kind !== "message") continue;
      const m = item.message;
      const own = this.#wants(m);
      const verdict = this.#hold.take(m, own, this.#readFrom);
      if (verdict === "held") {
        // Held frames are not read yet: a cut back to their transaction's start loses nothing read.
        this.#readMessagesTo = Math.min(this.#readMessagesTo, this.#hold.openAt!);
        continue;
      }
      this.#readMessagesTo = m.end;
      if (verdict === "complete") for (const held of this.#hold.release()) this.#queue.push(held);
      else if (own) this.#queue.push(m);
    }
  }

  /** Whether `m` is this reader's: its key, and past where a sequence or a time placed it. */
  #wants(m: DecodedMessage): boolean {
    const key = this.#options.streamKey;
    if (key === undefined) {
      if (m.streamKey === SEA_STREAMER_INTERNAL || m.streamKey === PRIME_STREAM_KEY) return false;
    } else if (m.streamKey !== key) {
      return false;
    }
    if (this.#skip) {
      if (this.#skip(m)) return false;
      this.#skip = undefined;
    }
    return true;
  }

  async #chunk(): Promise<Uint8Array> {
    const ahead = this.#ahead;
    this.#ahead = undefined;
    this.#reading =
      ahead !== undefined && ahead.at === this.#readAt
        ? ahead.chunk
        : readChunk(this.#fd, this.#readAt, CHUNK);
    const chunk = await this.#reading;
    // After a close the descriptor is on its way out: no read-ahead may start on it.
    if (chunk.length === CHUNK && !this.#closed) {
      // Replaying a long file: the next read runs while this chunk is decoded.
      const at = this.#readAt + CHUNK;
      const next = readChunk(this.#fd, at, CHUNK);
      next.catch(() => {});
      this.#ahead = { at, chunk: next };
    }
    return chunk;
  }

  /** Reads until a message is queued (true) or the stream is over (false). */
  async #fill(): Promise<boolean> {
    while (!this.#over && !this.#closed) {
      const generation = this.#generation;
      const chunk = await this.#chunk();
      if (generation !== this.#generation) continue;
      if (chunk.length > 0) {
        this.#readAt += chunk.length;
        const items = this.#decoder.push(chunk);
        // A short read reached the end of what was written: what the decoder put off (a check
        // inside a large frame) is decided now, as it would be on the whole bytes.
        if (chunk.length < CHUNK) items.push(...this.#decoder.flush());
        this.#accept(items);
        const error = this.#decoder.error;
        if (error) {
          if (this.#follow && this.#retried !== this.#decoder.offset) {
            // A writer that reopened a torn file rewrites its tail (from an open transaction's
            // start, if one was cut): read those bytes again once.
            this.#retried = this.#decoder.offset;
            const keep = this.#queue.length > this.#head;
            this.#reread(this.#decoder.offset);
            if (keep) return true;
            continue;
          }
          this.#damage = error;
          this.#over = true;
        } else if (this.#decoder.ended) {
          this.#over = true;
        }
        if (this.#head < this.#queue.length) return true;
        continue;
      }
      if (!this.#follow) {
        const outcome = this.#decoder.finish();
        if (outcome.status === "damaged") this.#damage = outcome.error;
        this.#over = true;
        break;
      }
      // Closed while reading: the descriptor is about to go, so it is not used again.
      if (this.#closed) break;
      this.#sizing = sizeOf(this.#fd);
      const size = await this.#sizing;
      if (this.#closed) break;
      if (generation !== this.#generation) continue;
      if (size < this.#readMessagesTo) {
        // Cut below messages already read: no writer does that (a reopening writer cuts only a
        // torn tail, a transaction left open with it, and perhaps a beacon after the last frame). Messages are gone, and a writer
        // appending now reuses their sequence numbers, so reading on would mislead: stop, loudly.
        this.#damage = fileError(
          "FILE_TRUNCATED",
          `${this.path} was truncated under this reader to ${size} bytes, below the messages it had read (to offset ${this.#readMessagesTo}): messages were removed from the file by something other than its writer; the reader stops rather than read on from a place it cannot trust`,
          size,
        );
        this.#over = true;
        break;
      }
      if (size < this.#readAt) {
        // Truncated under us (a writer cut a torn tail): drop what was read past the last unit,
        // and an open transaction's frames, which the cut may have taken.
        this.#reread(Math.min(this.#decoder.offset, size));
        continue;
      }
      if (size > this.#readAt) continue;
      await this.#sleep();
    }
    return this.#head < this.#queue.length;
  }

  #sleep(): Promise<void> {
    // A close that came while a read or a size check was running must not wait out a poll.
    if (this.#poked || this.#closed) {
      this.#poked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(finish, this.#pollMs);
      this.#wake = finish;
    });
  }

  #poke(): void {
    const wake = this.#wake;
    if (wake) wake();
    else this.#poked = true;
  }

  #unwatch(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }
}

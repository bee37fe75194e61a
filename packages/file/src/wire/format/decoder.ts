import type { RustStreamError } from "@ruststream/core";
import { type ByteWindow, concatBytes, windowEnd } from "./bytes.js";
import {
  END_OF_STREAM_PAYLOAD,
  HEADER_SIZE,
  MAX_PAYLOAD_LIMIT,
  SEA_STREAMER_INTERNAL,
} from "./constants.js";
import { fileError, isFileError } from "./errors.js";
import { type ReadOptions, readUnit } from "./frameReader.js";
import { decodeHeader, isSeaStreamerFile } from "./header.js";
import type { Beacon, DecodedMessage, FileHeader, StreamMessage } from "./types.js";

export type DecodedItem =
  | { readonly kind: "message"; readonly message: DecodedMessage }
  | { readonly kind: "beacon"; readonly beacon: Beacon };

/** How a decode ended. `end` is always the offset just past the last complete unit. */
export type DecodeOutcome =
  /** Every byte was decoded and the data stops between two units. */
  | { readonly status: "clean"; readonly end: number }
  /** The end-of-stream frame was read; readers stop there and ignore anything after it. */
  | { readonly status: "eos"; readonly end: number }
  /**
   * Truncated or corrupt (`fileErrorDetail(error)`: the code and an offset equal to `end`);
   * everything before it is intact.
   */
  | { readonly status: "damaged"; readonly end: number; readonly error: RustStreamError };

export interface DecoderOptions {
  /**
   * Check the bytes upstream writes but never reads (CR markers, beacon `remaining`). On by
   * default: every conforming writer produces them, and they catch damage the payload checksum
   * cannot see, since frame headers are not checksummed.
   */
  readonly strict?: boolean;
  /**
   * A frame claiming a longer payload is refused (`FRAME_TOO_LARGE`) instead of being waited for.
   * The default is the format's own limit (4 GiB - 1), so no file a conforming writer made is
   * refused; a reader of a growing file sets its own (`FileConsumer`: 16 MiB).
   */
  readonly maxMessageBytes?: number;
}

export function isEndOfStream(message: StreamMessage): boolean {
  const p = message.payload;
  return (
    message.streamKey === SEA_STREAMER_INTERNAL &&
    p.length === 3 &&
    p[0] === END_OF_STREAM_PAYLOAD.charCodeAt(0) &&
    p[1] === END_OF_STREAM_PAYLOAD.charCodeAt(1) &&
    p[2] === END_OF_STREAM_PAYLOAD.charCodeAt(2)
  );
}

const EMPTY = new Uint8Array(0);

/**
 * Incremental decoder: feed file bytes in order with `push`, get messages and beacons as soon as
 * they are complete. A unit cut short is simply waited for, since a live file may still be
 * growing; `finish` declares there is no more and turns a partial unit into `FILE_TRUNCATED`.
 * Corruption stops decoding at once and is kept in `error`.
 *
 * Payloads are views into the pushed chunks, which must not be modified afterwards.
 */
export class StreamDecoder {
  #header: FileHeader | undefined;
  #opts: Omit<ReadOptions, "beaconInterval">;
  #win: ByteWindow = { bytes: EMPTY, start: 0 };
  /**
   * Chunks not yet merged into the window. Merging only once enough has arrived keeps a large
   * frame fed in small chunks linear rather than quadratic.
   */
  #pending: Uint8Array[] = [];
  #pendingLength = 0;
  #pos = 0;
  #needUntil = 0;
  #error: RustStreamError | undefined;
  #eos = false;

  constructor(options: DecoderOptions = {}) {
    this.#opts = {
      strict: options.strict ?? true,
      maxMessageBytes: Math.min(options.maxMessageBytes ?? MAX_PAYLOAD_LIMIT, MAX_PAYLOAD_LIMIT),
    };
  }

  /**
   * A decoder that starts in the middle of a file: `offset` must be a unit boundary (just past a
   * frame or beacon, or an interval boundary), and the first chunk pushed is the byte at `offset`.
   * Followers and seeks use it so they never re-read the file from its header.
   */
  static resumeAt(header: FileHeader, offset: number, options: DecoderOptions = {}): StreamDecoder {
    const decoder = new StreamDecoder(options);
    decoder.#header = header;
    decoder.#pos = offset;
    decoder.#win = { bytes: EMPTY, start: offset };
    return decoder;
  }

  /** The file header, once its 128 bytes have been pushed. */
  get header(): FileHeader | undefined {
    return this.#header;
  }

  /** File offset just past the last complete unit (the header counts as one). */
  get offset(): number {
    return this.#pos;
  }

  /** Set when the data is corrupt; nothing more is decoded afterwards. */
  get error(): RustStreamError | undefined {
    return this.#error;
  }

  /**
   * Bytes received past the last complete unit. A follower that sees this stay above zero while
   * the file stops growing is looking at a torn tail.
   */
  get pendingBytes(): number {
    return windowEnd(this.#win) + this.#pendingLength - this.#pos;
  }

  /** True once the end-of-stream frame has been decoded. */
  get ended(): boolean {
    return this.#eos;
  }

  push(chunk: Uint8Array): DecodedItem[] {
    if (this.#error || this.#eos || chunk.length === 0) return [];
    this.#pending.push(chunk);
    this.#pendingLength += chunk.length;
    if (windowEnd(this.#win) + this.#pendingLength < this.#needUntil) return [];
    return this.flush();
  }

  /**
   * Decodes now whatever the bytes pushed so far allow. `push` spaces out the checks of a frame
   * that arrives in many pieces (each check reads the frame from its start, so checking at every
   * piece would cost the square of its size): a reader that has reached the end of what was written
   * calls this, so that what it holds gets the verdict the same bytes get whole.
   */
  flush(): DecodedItem[] {
    const items: DecodedItem[] = [];
    if (this.#error || this.#eos) return items;
    this.#merge();
    try {
      this.#decode(items);
    } catch (error) {
      if (!isFileError(error)) throw error;
      this.#error = error;
    }
    this.#compact();
    return items;
  }

  /** Declares the end of the data and says how decoding ended. */
  finish(): DecodeOutcome {
    // What `push` put off is only a check inside a frame not yet whole (a unit is decoded by the
    // push that completes it): this yields no message, only the verdict the whole bytes get.
    if (this.#pendingLength > 0) this.flush();
    const end = this.#pos;
    if (this.#error) return { status: "damaged", end, error: this.#error };
    if (this.#eos) return { status: "eos", end };
    if (!this.#header) {
      if (windowEnd(this.#win) === 0) {
        const error = fileError(
          "FILE_TRUNCATED",
          "The file is empty, so it has no SeaStreamer header: write a new file",
          0,
        );
        return { status: "damaged", end, error };
      }
      try {
        decodeHeader(this.#win.bytes, this.#opts.strict);
      } catch (error) {
        if (isFileError(error)) return { status: "damaged", end, error };
        throw error;
      }
    }
    if (windowEnd(this.#win) > end) {
      const error = fileError(
        "FILE_TRUNCATED",
        `The data ends ${windowEnd(this.#win) - end} bytes into an incomplete frame or beacon (a write cut short, e.g. by a crash); the messages before it are intact. Appending resumes after the last complete frame`,
        end,
      );
      return { status: "damaged", end, error };
    }
    return { status: "clean", end };
  }

  #merge(): void {
    if (this.#pendingLength === 0) return;
    const win = this.#win;
    const chunks = win.bytes.length === 0 ? this.#pending : [win.bytes, ...this.#pending];
    // Always a fresh buffer (or an untouched chunk): payload views handed out earlier must keep
    // their bytes.
    const bytes = chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
    this.#win = { bytes, start: win.start };
    this.#pending = [];
    this.#pendingLength = 0;
  }

  #compact(): void {
    const drop = this.#pos - this.#win.start;
    if (drop > 0) {
      this.#win = { bytes: this.#win.bytes.subarray(drop), start: this.#pos };
    }
  }

  /**
   * Where the next `push` decodes again: where the unit can be read further (`until`, a beacon
   * inside a frame, say). A large frame arriving in small pieces is checked again only once the
   * bytes held for it have doubled (or it can be whole), so its bytes are merged and walked a
   * bounded number of times in all.
   */
  #nextCheck(until: number, whole: number | undefined): number {
    if (whole === undefined) return until;
    const doubled = this.#pos + 2 * (windowEnd(this.#win) - this.#pos);
    return Math.max(until, Math.min(whole, doubled));
  }

  #decode(items: DecodedItem[]): void {
    let header = this.#header;
    if (!header) {
      const bytes = this.#win.bytes;
      if (isSeaStreamerFile(bytes) === false || bytes.length >= HEADER_SIZE) {
        header = decodeHeader(bytes, this.#opts.strict);
        this.#header = header;
        this.#pos = HEADER_SIZE;
      } else {
        this.#needUntil = HEADER_SIZE;
        return;
      }
    }
    const opts: ReadOptions = { ...this.#opts, beaconInterval: header.beaconInterval };
    for (;;) {
      const unit = readUnit(this.#win, this.#pos, opts);
      if (unit.kind === "need") {
        this.#needUntil = this.#nextCheck(unit.until, unit.whole);
        return;
      }
      if (unit.kind === "beacon") {
        // Between frames a beacon has nothing left over; otherwise the previous frame lied.
        if (opts.strict && unit.beacon.remaining !== 0) {
          throw fileError(
            "FILE_CORRUPT",
            `Beacon between frames says ${unit.beacon.remaining} bytes of a frame follow; the messages before it are intact, readers stop here`,
            this.#pos,
          );
        }
        items.push({ kind: "beacon", beacon: unit.beacon });
      } else {
        for (const beacon of unit.beacons) items.push({ kind: "beacon", beacon });
        items.push({ kind: "message", message: unit.message });
      }
      this.#pos = unit.end;
      if (unit.kind === "frame" && isEndOfStream(unit.message)) {
        this.#eos = true;
        return;
      }
    }
  }
}

export interface DecodedFile {
  readonly header: FileHeader | undefined;
  /** Every complete frame before any damage, the end-of-stream frame included. */
  readonly messages: DecodedMessage[];
  readonly beacons: Beacon[];
  readonly outcome: DecodeOutcome;
}

/**
 * Decodes a whole file held in memory. Damage is reported in `outcome`, never thrown. Payloads are
 * views into `bytes`, not copies.
 */
export function decodeFile(bytes: Uint8Array, options: DecoderOptions = {}): DecodedFile {
  const decoder = new StreamDecoder(options);
  const messages: DecodedMessage[] = [];
  const beacons: Beacon[] = [];
  for (const item of decoder.push(bytes)) {
    if (item.kind === "message") messages.push(item.message);
    else beacons.push(item.beacon);
  }
  return { header: decoder.header, messages, beacons, outcome: decoder.finish() };
}

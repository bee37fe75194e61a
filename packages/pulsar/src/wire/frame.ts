// Pulsar's framing, all integers big-endian:
//   simple:  [totalSize u32][commandSize u32][BaseCommand]
//   payload: [totalSize u32][commandSize u32][BaseCommand]
//            ([0x0e02][size u32][BrokerEntryMetadata])   only from a broker that adds it
//            [0x0e01][crc32c u32][metadataSize u32][MessageMetadata][payload]
// totalSize counts every byte after itself; the checksum covers every byte after itself.
import { baseCommand, brokerEntryMetadata, messageMetadata } from "./commands/codec.js";
import type { BaseCommand, BrokerEntryMetadata, MessageMetadata } from "./commands/shapes.js";
import { crc32c } from "./crc32c.js";

/** Marks the checksummed section of a payload frame. */
export const MAGIC_CRC32C = 0x0e01;
/** Marks the broker's own metadata, which precedes the checksummed section when present. */
export const MAGIC_BROKER_ENTRY_METADATA = 0x0e02;
/** What a frame may carry beyond the broker's max_message_size (commands, metadata), as the Java client allows. */
export const FRAME_PADDING = 10 * 1024;
/** The broker's default max_message_size (5 MiB), assumed until CONNECTED says otherwise. */
export const DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024;

/** A simple frame: a command without payload. */
export function encodeCommandFrame(command: BaseCommand): Uint8Array {
  const body = baseCommand.encode(command);
  const frame = Buffer.allocUnsafe(8 + body.length);
  frame.writeUInt32BE(4 + body.length, 0);
  frame.writeUInt32BE(body.length, 4);
  frame.set(body, 8);
  return frame;
}

/**
 * The checksummed part of a payload frame, `[metadataSize][metadata][payload]`, which stays the same
 * when the message is resent after a reconnect (only the command in front changes).
 */
export function encodeMessageSection(metadata: MessageMetadata, payload: Uint8Array): Uint8Array {
  const meta = messageMetadata.encode(metadata);
  const section = Buffer.allocUnsafe(4 + meta.length + payload.length);
  section.writeUInt32BE(meta.length, 0);
  section.set(meta, 4);
  section.set(payload, 4 + meta.length);
  return section;
}

/** A payload frame (SEND): the command, the magic, the CRC-32C, then the message section. */
export function encodePayloadFrame(command: BaseCommand, section: Uint8Array): Uint8Array {
  const body = baseCommand.encode(command);
  const total = 4 + body.length + 2 + 4 + section.length;
  const frame = Buffer.allocUnsafe(4 + total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(body.length, 4);
  frame.set(body, 8);
  let at = 8 + body.length;
  frame.writeUInt16BE(MAGIC_CRC32C, at);
  frame.writeUInt32BE(crc32c(section), at + 2);
  at += 6;
  frame.set(section, at);
  return frame;
}

/**
 * A payload frame built in one buffer: the command, the magic, the CRC-32C, the metadata, then
 * `payloadLength` bytes that `writePayload(frame, at)` writes in place; the checksum is computed
 * after. A producer's batch is written straight into its frame this way, instead of into a payload,
 * then a message section, then the frame (three copies). The frame can be resent as it is: the
 * SEND command in front does not change across reconnects.
 */
export function buildPayloadFrame(
  command: BaseCommand,
  metadata: MessageMetadata,
  payloadLength: number,
  writePayload: (frame: Buffer, at: number) => void,
): Buffer {
  const body = baseCommand.encode(command);
  const meta = messageMetadata.encode(metadata);
  const checksumAt = 8 + body.length + 2;
  const sectionAt = checksumAt + 4;
  const frame = Buffer.allocUnsafe(sectionAt + 4 + meta.length + payloadLength);
  frame.writeUInt32BE(frame.length - 4, 0);
  frame.writeUInt32BE(body.length, 4);
  frame.set(body, 8);
  frame.writeUInt16BE(MAGIC_CRC32C, checksumAt - 2);
  frame.writeUInt32BE(meta.length, sectionAt);
  frame.set(meta, sectionAt + 4);
  writePayload(frame, sectionAt + 4 + meta.length);
  frame.writeUInt32BE(crc32c(frame.subarray(sectionAt)), checksumAt);
  return frame;
}

/** A payload frame's message, as read from the wire. */
export interface PayloadSection {
  readonly brokerEntryMetadata?: BrokerEntryMetadata;
  readonly metadata: MessageMetadata;
  /** The payload as it travelled: compressed, and for a batch the concatenated entries. */
  readonly payload: Uint8Array;
  /** False when the CRC-32C did not match: the metadata and payload cannot be trusted. */
  readonly checksumValid: boolean;
  /** False when the frame carried no checksum at all (brokers before 1.20 could omit it). */
  readonly checksummed: boolean;
}

/** One decoded frame. */
export interface Frame {
  readonly command: BaseCommand;
  readonly payload?: PayloadSection;
}

/** Thrown for bytes that cannot be a frame: the connection must be dropped, since framing is lost. */
export class FrameError extends Error {
  override readonly name = "FrameError";
}

/**
 * The bytes as a Buffer over the same memory (no copy), for its big-endian readers. The public
 * signatures say Uint8Array so the published types need no @types/node; a socket's chunks already
 * are Buffers.
 */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Parses one complete frame (the bytes after totalSize). */
export function decodeFrame(frame: Uint8Array): Frame {
  const bytes = asBuffer(frame);
  if (bytes.length < 4)
    throw new FrameError(`a frame of ${bytes.length} bytes has no command size`);
  const commandSize = bytes.readUInt32BE(0);
  if (4 + commandSize > bytes.length)
    throw new FrameError(`command size ${commandSize} exceeds the frame (${bytes.length} bytes)`);
  const command = baseCommand.decode(bytes.subarray(4, 4 + commandSize));
  let at = 4 + commandSize;
  if (at === bytes.length) return { command };

  let entryMetadata: BrokerEntryMetadata | undefined;
  if (bytes.length >= at + 6 && bytes.readUInt16BE(at) === MAGIC_BROKER_ENTRY_METADATA) {
    const size = bytes.readUInt32BE(at + 2);
    entryMetadata = brokerEntryMetadata.decode(bytes.subarray(at + 6, at + 6 + size));
    at += 6 + size;
  }
  let checksummed = false;
  let checksumValid = true;
  if (bytes.length >= at + 6 && bytes.readUInt16BE(at) === MAGIC_CRC32C) {
    checksummed = true;
    const expected = bytes.readUInt32BE(at + 2);
    at += 6;
    checksumValid = crc32c(bytes.subarray(at)) === expected;
  }
  if (bytes.length < at + 4) throw new FrameError("a payload frame ends before its metadata size");
  const metadataSize = bytes.readUInt32BE(at);
  at += 4;
  if (at + metadataSize > bytes.length)
    throw new FrameError(`metadata size ${metadataSize} exceeds the frame`);
  let metadata: MessageMetadata;
  try {
    metadata = messageMetadata.decode(bytes.subarray(at, at + metadataSize));
  } catch (error) {
    // Corrupt metadata under a bad checksum is the checksum's failure, reported as such.
    if (!checksumValid) metadata = { producerName: "", sequenceId: 0n, publishTime: 0 };
    else throw new FrameError(`unreadable message metadata: ${String(error)}`);
  }
  const payload = bytes.subarray(at + metadataSize);
  const section: PayloadSection = entryMetadata
    ? { brokerEntryMetadata: entryMetadata, metadata, payload, checksumValid, checksummed }
    : { metadata, payload, checksumValid, checksummed };
  return { command, payload: section };
}

/**
 * Cuts a byte stream into frames. Chunks are kept as they arrived and joined once per frame, so a
 * 5 MiB frame arriving in 64 KiB pieces is copied once, not once per piece.
 */
export class FrameReader {
  readonly #chunks: Buffer[] = [];
  #buffered = 0;

  /** @param maxFrameSize the largest totalSize accepted; a larger one is a lost stream. */
  constructor(public maxFrameSize: number = DEFAULT_MAX_MESSAGE_SIZE + FRAME_PADDING) {}

  /** Adds bytes from the socket and returns the frames they complete, in order. */
  push(bytes: Uint8Array): Frame[] {
    const chunk = asBuffer(bytes);
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const frames: Frame[] = [];
    while (this.#buffered >= 4) {
      const total = this.#peekTotalSize();
      if (total > this.maxFrameSize)
        throw new FrameError(`frame of ${total} bytes exceeds the limit of ${this.maxFrameSize}`);
      if (this.#buffered < 4 + total) break;
      const frame = this.#take(4 + total);
      frames.push(decodeFrame(frame.subarray(4)));
    }
    return frames;
  }

  #peekTotalSize(): number {
    const first = this.#chunks[0]!;
    if (first.length >= 4) return first.readUInt32BE(0);
    return this.#take(4, true).readUInt32BE(0);
  }

  /** Removes (or, with `peek`, copies) the first `size` buffered bytes. */
  #take(size: number, peek = false): Buffer {
    const first = this.#chunks[0]!;
    if (first.length >= size) {
      if (peek) return first;
      if (first.length === size) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(size);
      this.#buffered -= size;
      return first.subarray(0, size);
    }
    const out = Buffer.allocUnsafe(size);
    let filled = 0;
    let index = 0;
    while (filled < size) {
      const chunk = this.#chunks[index]!;
      const n = Math.min(chunk.length, size - filled);
      chunk.copy(out, filled, 0, n);
      filled += n;
      if (peek) {
        index++;
        continue;
      }
      if (n === chunk.length) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(n);
    }
    if (!peek) this.#buffered -= size;
    return out;
  }
}

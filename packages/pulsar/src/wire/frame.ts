// Pulsar's framing, all integers big-endian:
//   simple:  [totalSize u32][commandSize u32][BaseCommand]
//   payload: [totalSize u32][commandSize u32][BaseCommand]
//            ([0x0e02][size u32][BrokerEntryMetadata])   only from a broker that adds it
//            [0x0e01][crc32c u32][metadataSize u32][MessageMetadata][payload]
// totalSize counts every byte after itself; the checksum covers every byte after itself.
import { baseCommand, brokerEntryMetadata, messageMetadata } from "./commands/codec.js";
import { CommandType } from "./commands/enums.js";
import { MESSAGES } from "./commands/fieldTable.js";
import type { BaseCommand, BrokerEntryMetadata, MessageMetadata } from "./commands/shapes.js";
import { crc32c } from "./crc32c.js";
import { DecodeError } from "./errors.js";

/** Marks the checksummed section of a payload frame. */
export const MAGIC_CRC32C = 0x0e01;
/** Marks the broker's own metadata, which precedes the checksummed section when present. */
export const MAGIC_BROKER_ENTRY_METADATA = 0x0e02;
/** What a frame may carry beyond the broker's max_message_size (commands, metadata), as the Java client allows. */
export const FRAME_PADDING = 10 * 1024;
/**
 * What a frame from the broker may carry beyond the max message size: its command and the broker's
 * entry metadata. A frame over the limit is read this far (its command, and the start of its
 * payload section) before the rest of it is skipped.
 */
export const BROKER_FRAME_HEADROOM = 4 * FRAME_PADDING;
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
  /** Its metadata; a stand-in with no fields set when `unreadable` or a bad checksum left none. */
  readonly metadata: MessageMetadata;
  /**
   * The payload as it travelled: compressed, and for a batch the concatenated entries. When
   * `unreadable`, every byte of the section from its checksummed part on (or all of it, when
   * reading failed before that), since where the payload starts is not known.
   */
  readonly payload: Uint8Array;
  /** False when the CRC-32C did not match: the metadata and payload cannot be trusted. */
  readonly checksumValid: boolean;
  /** False when the frame carried no checksum at all (brokers before 1.20 could omit it). */
  readonly checksummed: boolean;
  /**
   * Why the section could not be read (its sizes overrun the frame, or its metadata is not a
   * MessageMetadata), when it could not: the frame around it is sound, so the entry is undecodable
   * and the connection goes on.
   */
  readonly unreadable?: string;
  /**
   * Set, saying so, when the frame was larger than the reader's limit: its payload was skipped as
   * it arrived, unread and unchecked (`payload` is empty; `checksumValid` means nothing). Its
   * metadata is what its first bytes held (none when it did not fit there), to count its messages.
   */
  readonly oversized?: string;
}

/** One decoded frame. */
export interface Frame {
  readonly command: BaseCommand;
  readonly payload?: PayloadSection;
}

/** Thrown for bytes that cannot be a frame: the connection must be dropped, since framing is lost. */
export class FrameError extends DecodeError {
  override readonly name = "FrameError";
  /**
   * The command of a frame over the limit that is no MESSAGE, so no entry to skip: the answer to a
   * request, perhaps, which its connection then fails for good rather than ask again.
   */
  readonly command: BaseCommand | undefined;

  constructor(message: string, options?: { cause?: unknown; command?: BaseCommand }) {
    super(message, options);
    this.command = options?.command;
  }
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

/** The field of BaseCommand that holds each command type's body: the one numbered as the type. */
const bodyFields = new Map<number, string>(
  Object.entries(MESSAGES.BaseCommand).map(([name, spec]) => [spec.id, name]),
);
const commandNames = new Map<number, string>(
  Object.entries(CommandType).map(([name, value]) => [value, name]),
);

/** The command of a frame, with the body its type names; FrameError for anything else. */
function decodeCommand(bytes: Uint8Array): BaseCommand {
  let command: BaseCommand;
  try {
    command = baseCommand.decode(bytes);
  } catch (error) {
    throw new FrameError(`unreadable command: ${(error as Error).message}`, { cause: error });
  }
  const body = bodyFields.get(command.type);
  if (body === undefined || body === "type" || !(body in command))
    throw new FrameError(`a ${commandNames.get(command.type)} command without its body`);
  return command;
}

/** Parses one complete frame (the bytes after totalSize); FrameError when its command cannot be read. */
export function decodeFrame(frame: Uint8Array): Frame {
  const bytes = asBuffer(frame);
  if (bytes.length < 4)
    throw new FrameError(`a frame of ${bytes.length} bytes has no command size`);
  const commandSize = bytes.readUInt32BE(0);
  if (4 + commandSize > bytes.length)
    throw new FrameError(`command size ${commandSize} exceeds the frame (${bytes.length} bytes)`);
  const command = decodeCommand(bytes.subarray(4, 4 + commandSize));
  const at = 4 + commandSize;
  if (at === bytes.length) return { command };
  return { command, payload: decodePayloadSection(bytes.subarray(at)) };
}

/** The metadata of a section that has none to offer: no field beyond the required ones set. */
const noMetadata = (): MessageMetadata => ({ producerName: "", sequenceId: 0n, publishTime: 0 });

/**
 * The section after a payload frame's command. It never throws: what cannot be read is reported in
 * `unreadable`, since the frame's total size already delimited it and the connection is sound.
 * Without `verify`, the checksum is not computed (the section is only the start of one).
 */
function decodePayloadSection(bytes: Buffer, verify = true): PayloadSection {
  let at = 0;
  let entryMetadata: BrokerEntryMetadata | undefined;
  let checksummed = false;
  let checksumValid = true;
  const unreadable = (why: string): PayloadSection => ({
    metadata: noMetadata(),
    payload: bytes.subarray(checksummed ? at : 0),
    checksumValid,
    checksummed,
    unreadable: why,
  });
  if (bytes.length >= 6 && bytes.readUInt16BE(0) === MAGIC_BROKER_ENTRY_METADATA) {
    const size = bytes.readUInt32BE(2);
    if (6 + size > bytes.length)
      return unreadable(`broker entry metadata size ${size} exceeds the frame`);
    try {
      entryMetadata = brokerEntryMetadata.decode(bytes.subarray(6, 6 + size));
    } catch (error) {
      return unreadable((error as Error).message);
    }
    at = 6 + size;
  }
  if (bytes.length >= at + 6 && bytes.readUInt16BE(at) === MAGIC_CRC32C) {
    checksummed = true;
    const expected = bytes.readUInt32BE(at + 2);
    at += 6;
    checksumValid = !verify || crc32c(bytes.subarray(at)) === expected;
  }
  if (bytes.length < at + 4) return unreadable("the payload section ends before its metadata size");
  const metadataSize = bytes.readUInt32BE(at);
  if (at + 4 + metadataSize > bytes.length)
    return unreadable(`metadata size ${metadataSize} exceeds the frame`);
  let metadata: MessageMetadata;
  try {
    metadata = messageMetadata.decode(bytes.subarray(at + 4, at + 4 + metadataSize));
  } catch (error) {
    // Corrupt metadata under a bad checksum is the checksum's failure, reported as such.
    if (checksumValid) return unreadable((error as Error).message);
    metadata = noMetadata();
  }
  const payload = bytes.subarray(at + 4 + metadataSize);
  return entryMetadata
    ? { brokerEntryMetadata: entryMetadata, metadata, payload, checksumValid, checksummed }
    : { metadata, payload, checksumValid, checksummed };
}

/**
 * Cuts a byte stream into frames. Chunks are kept as they arrived and joined once per frame, so a
 * 5 MiB frame arriving in 64 KiB pieces is copied once, not once per piece. A frame over the limit
 * is never buffered: see #skipOversized.
 */
export class FrameReader {
  readonly #chunks: Buffer[] = [];
  #buffered = 0;
  /** Bytes of a frame over the limit not dropped yet: dropped as they arrive. */
  #skipping = 0;

  /**
   * @param maxFrameSize the largest totalSize read whole; a larger frame is skipped when it holds a
   * MESSAGE (its entry undecodable), and is a FrameError otherwise.
   */
  constructor(public maxFrameSize: number = DEFAULT_MAX_MESSAGE_SIZE + FRAME_PADDING) {}

  /** Adds bytes from the socket and returns the frames they complete, in order. */
  push(bytes: Uint8Array): Frame[] {
    const chunk = asBuffer(bytes);
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    if (this.#skipping > 0) this.#drop();
    const frames: Frame[] = [];
    while (this.#buffered >= 4) {
      const total = this.#peekTotalSize();
      if (total > this.maxFrameSize) {
        const skipped = this.#skipOversized(total);
        if (skipped === undefined) break;
        frames.push(skipped);
        continue;
      }
      if (this.#buffered < 4 + total) break;
      const frame = this.#take(4 + total);
      frames.push(decodeFrame(frame.subarray(4)));
    }
    return frames;
  }

  /**
   * A frame over the limit, once its first bytes are in (its command, and the start of its payload
   * section, within BROKER_FRAME_HEADROOM): a MESSAGE comes out with its section marked
   * `oversized` and the rest of the frame is dropped as it arrives, so its entry is undecodable and
   * the stream goes on. Any other command is a FrameError carrying it; a command that is not within
   * the first bytes, or cannot be read, is a lost stream.
   */
  #skipOversized(total: number): Frame | undefined {
    const headSize = Math.min(4 + total, BROKER_FRAME_HEADROOM);
    if (this.#buffered < headSize) return undefined;
    const head = this.#take(headSize, true).subarray(0, headSize);
    const why = `a frame of ${total} bytes exceeds the limit of ${this.maxFrameSize}`;
    if (headSize < 8) throw new FrameError(`${why}, and has no command size`);
    const commandSize = head.readUInt32BE(4);
    if (8 + commandSize > headSize)
      throw new FrameError(
        `${why}, and its command of ${commandSize} bytes is not within its first ${headSize}: the stream is lost`,
      );
    const command = decodeCommand(head.subarray(8, 8 + commandSize));
    if (command.type !== CommandType.MESSAGE)
      throw new FrameError(
        `${why}: a ${commandNames.get(command.type)} command, which is no entry to skip`,
        { command },
      );
    const start = decodePayloadSection(head.subarray(8 + commandSize), false);
    this.#skipping = 4 + total;
    this.#drop();
    const payload: PayloadSection = {
      metadata: start.metadata,
      payload: new Uint8Array(0),
      checksumValid: true,
      checksummed: start.checksummed,
      oversized: `${why}: its payload was skipped unread`,
    };
    return {
      command,
      payload: start.brokerEntryMetadata
        ? { brokerEntryMetadata: start.brokerEntryMetadata, ...payload }
        : payload,
    };
  }

  /** Drops what is buffered of the frame being skipped. */
  #drop(): void {
    while (this.#skipping > 0 && this.#chunks.length > 0) {
      const first = this.#chunks[0]!;
      const n = Math.min(first.length, this.#skipping);
      if (n === first.length) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      this.#buffered -= n;
      this.#skipping -= n;
    }
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

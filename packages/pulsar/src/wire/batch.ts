// A batch is one broker entry holding many messages: the outer MessageMetadata carries
// num_messages_in_batch (its presence alone marks a batch, even of one), and the payload, compressed
// as a whole, is N times [size u32][SingleMessageMetadata][payload of payload_size bytes].
//
// Most messages of a batch carry only payload_size and sequence_id (no key, properties or event
// time). Those are written and read here directly, two varints, rather than through the protobuf
// reflection codec, whose plain-object conversion and writer cost more per message than the rest of
// the batch's handling (tooling/bench's Pulsar profile); anything else takes the codec. The bytes are
// the codec's own (test/protocol.test.ts compares them).
import { singleMessageMetadata } from "./commands/codec.js";
import type { SingleMessageMetadata } from "./commands/shapes.js";
import { DecodeError } from "./errors.js";

/** One message of a batch. */
export interface BatchEntry {
  readonly metadata: SingleMessageMetadata;
  readonly payload: Uint8Array;
}

/** Field tags (field number << 3 | varint wire type) of the two fields the direct path handles. */
const PAYLOAD_SIZE_TAG = (3 << 3) | 0;
const SEQUENCE_ID_TAG = (8 << 3) | 0;

function varintLength(value: number): number {
  let length = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    length++;
  }
  return length;
}

function writeVarint(out: Uint8Array, at: number, value: number): number {
  while (value >= 128) {
    out[at++] = (value % 128) | 128;
    value = Math.floor(value / 128);
  }
  out[at++] = value;
  return at;
}

/** True when only payload_size and a sequence_id below 2^53 are set: the direct path's case. */
function onlySizeAndSequence(m: SingleMessageMetadata): boolean {
  return (
    m.properties === undefined &&
    m.partitionKey === undefined &&
    m.compactedOut === undefined &&
    m.eventTime === undefined &&
    m.partitionKeyB64Encoded === undefined &&
    m.orderingKey === undefined &&
    m.nullValue === undefined &&
    m.nullPartitionKey === undefined &&
    m.payloadSize >= 0 &&
    m.sequenceId !== undefined &&
    m.sequenceId >= 0n &&
    m.sequenceId <= BigInt(Number.MAX_SAFE_INTEGER)
  );
}

/**
 * The bytes of a batch message carrying only its payload size and sequence id (what
 * `encodeBatchEntry` writes for one), for a caller that writes the whole batch into one buffer with
 * `writeSizeAndSequenceEntry`. The sequence id must be below 2^53.
 */
export function sizeAndSequenceEntryLength(payloadLength: number, sequence: number): number {
  return 4 + 2 + varintLength(payloadLength) + varintLength(sequence) + payloadLength;
}

/** Writes such a message at `at`; returns where the next one starts. */
export function writeSizeAndSequenceEntry(
  out: Buffer,
  at: number,
  payload: Uint8Array,
  sequence: number,
): number {
  const metaLength = 2 + varintLength(payload.length) + varintLength(sequence);
  out.writeUInt32BE(metaLength, at);
  out[at + 4] = PAYLOAD_SIZE_TAG;
  let next = writeVarint(out, at + 5, payload.length);
  out[next++] = SEQUENCE_ID_TAG;
  next = writeVarint(out, next, sequence);
  out.set(payload, next);
  return next + payload.length;
}

/** Encodes one message of a batch; batches are the concatenation of these. */
export function encodeBatchEntry(metadata: SingleMessageMetadata, payload: Uint8Array): Uint8Array {
  if (onlySizeAndSequence(metadata)) {
    const size = metadata.payloadSize;
    const sequence = Number(metadata.sequenceId);
    const metaLength = 2 + varintLength(size) + varintLength(sequence);
    const out = Buffer.allocUnsafe(4 + metaLength + payload.length);
    out.writeUInt32BE(metaLength, 0);
    out[4] = PAYLOAD_SIZE_TAG;
    let at = writeVarint(out, 5, size);
    out[at++] = SEQUENCE_ID_TAG;
    at = writeVarint(out, at, sequence);
    out.set(payload, at);
    return out;
  }
  const meta = singleMessageMetadata.encode(metadata);
  const out = Buffer.allocUnsafe(4 + meta.length + payload.length);
  out.writeUInt32BE(meta.length, 0);
  out.set(meta, 4);
  out.set(payload, 4 + meta.length);
  return out;
}

/**
 * The offset after the varint `readShortVarint` last read: kept here rather than returned in an
 * object, since a received batch reads two varints for each of its messages.
 */
let varintNext = 0;

/**
 * Reads a varint of at most 7 bytes (below 2^49) at `at`: its value (the offset after it in
 * `varintNext`), or -1 when it runs longer or past `end`.
 */
function readShortVarint(bytes: Uint8Array, at: number, end: number): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 7 && at < end; i++) {
    const byte = bytes[at++]!;
    value += (byte & 127) * scale;
    if (byte < 128) {
      varintNext = at;
      return value;
    }
    scale *= 128;
  }
  return -1;
}

/**
 * Decodes a SingleMessageMetadata of payload_size and sequence_id alone (each at most once, in
 * either order) directly; undefined for anything else, which the codec then decodes.
 */
function decodeSizeAndSequence(
  bytes: Uint8Array,
  start: number,
  end: number,
): SingleMessageMetadata | undefined {
  let payloadSize: number | undefined;
  let sequenceId: number | undefined;
  let at = start;
  while (at < end) {
    const tag = bytes[at++];
    if (tag !== PAYLOAD_SIZE_TAG && tag !== SEQUENCE_ID_TAG) return undefined;
    const value = readShortVarint(bytes, at, end);
    if (value < 0) return undefined;
    at = varintNext;
    // payload_size is an int32: a value past 2^31 - 1 is a negative one's encoding, left to the codec.
    if (tag === PAYLOAD_SIZE_TAG) {
      if (payloadSize !== undefined || value > 0x7fffffff) return undefined;
      payloadSize = value;
    } else {
      if (sequenceId !== undefined) return undefined;
      sequenceId = value;
    }
  }
  if (payloadSize === undefined) return undefined;
  return sequenceId === undefined
    ? { payloadSize }
    : { payloadSize, sequenceId: BigInt(sequenceId) };
}

/**
 * Splits a decompressed batch payload into its `count` messages. Throws DecodeError when they do not
 * add up: a count below 1, a message running past the payload, or bytes left after the last one (a
 * count lower than the messages held, which would otherwise drop the rest unseen).
 */
export function readBatch(payload: Uint8Array, count: number): BatchEntry[] {
  if (!Number.isInteger(count) || count < 1)
    throw new DecodeError(`a batch count of ${count} (a batch holds at least 1 message)`);
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const entries: BatchEntry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > payload.length)
      throw new DecodeError(`the batch ends before message ${i} of the ${count} it declares`);
    const metaSize = view.getUint32(at);
    at += 4;
    if (at + metaSize > payload.length)
      throw new DecodeError(`batch message ${i}: its metadata size ${metaSize} overruns the batch`);
    const metadata =
      decodeSizeAndSequence(payload, at, at + metaSize) ??
      singleMessageMetadata.decode(payload.subarray(at, at + metaSize));
    at += metaSize;
    const size = metadata.payloadSize;
    if (size < 0 || at + size > payload.length)
      throw new DecodeError(`batch message ${i}: its payload size ${size} overruns the batch`);
    entries.push({ metadata, payload: payload.subarray(at, at + size) });
    at += size;
  }
  if (at !== payload.length)
    throw new DecodeError(
      `the batch declares a count of ${count}, and ${payload.length - at} bytes follow its messages`,
    );
  return entries;
}

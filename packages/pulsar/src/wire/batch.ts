// A batch is one broker entry holding many messages: the outer MessageMetadata carries
// num_messages_in_batch (its presence alone marks a batch, even of one), and the payload, compressed
// as a whole, is N times [size u32][SingleMessageMetadata][payload of payload_size bytes].
import { type SingleMessageMetadata, singleMessageMetadata } from "./commands.js";

/** One message of a batch. */
export interface BatchEntry {
  readonly metadata: SingleMessageMetadata;
  readonly payload: Uint8Array;
}

/** Encodes one message of a batch; batches are the concatenation of these. */
export function encodeBatchEntry(metadata: SingleMessageMetadata, payload: Uint8Array): Buffer {
  const meta = singleMessageMetadata.encode(metadata);
  const out = Buffer.allocUnsafe(4 + meta.length + payload.length);
  out.writeUInt32BE(meta.length, 0);
  out.set(meta, 4);
  out.set(payload, 4 + meta.length);
  return out;
}

/** Splits a decompressed batch payload into its `count` messages; throws when it does not add up. */
export function readBatch(payload: Uint8Array, count: number): BatchEntry[] {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const entries: BatchEntry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > payload.length) throw new Error(`batch ends before message ${i} of ${count}`);
    const metaSize = view.getUint32(at);
    at += 4;
    if (at + metaSize > payload.length) throw new Error(`batch message ${i}: metadata overruns`);
    const metadata = singleMessageMetadata.decode(payload.subarray(at, at + metaSize));
    at += metaSize;
    const size = metadata.payloadSize;
    if (size < 0 || at + size > payload.length)
      throw new Error(`batch message ${i}: payload overruns`);
    entries.push({ metadata, payload: payload.subarray(at, at + size) });
    at += size;
  }
  return entries;
}

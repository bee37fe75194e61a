// A batch's payload: N times [size][SingleMessageMetadata][payload], measured first and then written
// once, into the SEND frame itself (or, to be compressed, into one buffer). A message with only a
// payload, and a sequence id a double holds, is written directly (batch.ts); any other goes through
// the codec into its own buffer.
import {
  encodeBatchEntry,
  sizeAndSequenceEntryLength,
  writeSizeAndSequenceEntry,
} from "../batch.js";
import type { SingleMessageMetadata } from "../commands/shapes.js";
import { applyMessageFields, carriesPayloadOnly } from "./messageFields.js";
import type { OutgoingMessage } from "./producerOptions.js";

/** The largest sequence id the batch writer handles as a number (2^53 - 1). */
const MAX_DIRECT_SEQUENCE = BigInt(Number.MAX_SAFE_INTEGER);

export interface BatchPayload {
  /** Its length in bytes. */
  readonly length: number;
  /** Writes it into `out` at `at`. */
  write(out: Buffer, at: number): void;
}

/** The payload of `messages`, the first with sequence id `first` and the rest after it. */
export function batchPayload(messages: readonly OutgoingMessage[], first: bigint): BatchPayload {
  const count = messages.length;
  const direct = first + BigInt(count - 1) <= MAX_DIRECT_SEQUENCE;
  const firstNumber = Number(first);
  let encoded: (Uint8Array | undefined)[] | undefined;
  let length = 0;
  for (let i = 0; i < count; i++) {
    const message = messages[i]!;
    if (direct && carriesPayloadOnly(message)) {
      length += sizeAndSequenceEntryLength(message.payload.length, firstNumber + i);
      continue;
    }
    const single: SingleMessageMetadata = {
      payloadSize: message.payload.length,
      sequenceId: first + BigInt(i),
    };
    applyMessageFields(single, message);
    const entry = encodeBatchEntry(single, message.payload);
    encoded ??= new Array<Uint8Array | undefined>(count);
    encoded[i] = entry;
    length += entry.length;
  }
  return {
    length,
    write(out, at) {
      for (let i = 0; i < count; i++) {
        const entry = encoded?.[i];
        if (entry === undefined) {
          at = writeSizeAndSequenceEntry(out, at, messages[i]!.payload, firstNumber + i);
        } else {
          out.set(entry, at);
          at += entry.length;
        }
      }
    },
  };
}

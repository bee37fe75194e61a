// pulsar-entries: a MESSAGE frame through what a consumer does with it: decodeFrame, then
// decodeEntry (checksum, metadata, the size against the limit, decompression, the batch). It
// never throws for the entry: what cannot be decoded comes back undecodable, with its reason.
import fc from "fast-check";
import {
  CommandType,
  CompressionType,
} from "../../../../packages/pulsar/src/wire/commands/enums.js";
import type {
  BaseCommand,
  MessageMetadata,
} from "../../../../packages/pulsar/src/wire/commands/shapes.js";
import { Acks } from "../../../../packages/pulsar/src/wire/consumer/acks.js";
import {
  decodeEntry,
  type Undecodable,
} from "../../../../packages/pulsar/src/wire/consumer/entryDecoding.js";
import type {
  Message,
  MessageOwner,
} from "../../../../packages/pulsar/src/wire/consumer/message.js";
import {
  decodeFrame,
  encodeMessageSection,
  encodePayloadFrame,
} from "../../../../packages/pulsar/src/wire/frame.js";
import { Queue } from "../../../../packages/pulsar/src/wire/queue.js";
import { lz4OfZeros, zlibOfZeros, zstdOfRuns } from "../../../../packages/pulsar/test/bombs.js";
import { type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import {
  batchPayload,
  describeInput,
  FUZZ_MAX_MESSAGE_SIZE,
  messageFrames,
  ownError,
  unchanged,
  untouched,
  valid,
} from "./pulsarSeeds.js";

/** What the consumer made of the entry: how many messages it queued and skipped, or why none. */
interface EntryOutcome {
  readonly declared: number;
  readonly queued: number;
  readonly outcome: number | Undecodable | "not a MESSAGE";
}

// The consumer an entry is decoded for: the owner is only kept on the messages it queues.
const owner: MessageOwner = {
  ack: () => undefined,
  ackCumulative: () => undefined,
  nack: () => undefined,
};

function decodeMessage(bytes: Uint8Array): EntryOutcome {
  const frame = decodeFrame(bytes);
  const message = frame.command.message;
  if (
    frame.command.type !== CommandType.MESSAGE ||
    message === undefined ||
    frame.payload === undefined
  )
    return { declared: 0, queued: 0, outcome: "not a MESSAGE" };
  const queue = new Queue<Message>();
  const source = {
    topic: "persistent://public/default/fuzz",
    partition: -1,
    owner,
    consumerId: message.consumerId,
    acks: new Acks({ connection: () => undefined, consumerId: () => message.consumerId }, 1000, 0),
    maxMessageSize: FUZZ_MAX_MESSAGE_SIZE,
  };
  const outcome = decodeEntry(message, frame.payload, source, queue);
  return {
    declared: frame.payload.metadata.numMessagesInBatch ?? 1,
    queued: queue.length,
    outcome,
  };
}

const command: BaseCommand = {
  type: CommandType.MESSAGE,
  message: { consumerId: 1, messageId: { ledgerId: 5n, entryId: 9n } },
};

/** A MESSAGE frame (after totalSize) of this metadata (with the producer's fields) and payload. */
function entry(metadata: Partial<MessageMetadata>, payload: Uint8Array): Mutated {
  const full: MessageMetadata = { producerName: "p", sequenceId: 0n, publishTime: 1, ...metadata };
  return unchanged(encodePayloadFrame(command, encodeMessageSection(full, payload)).subarray(4));
}

const isUndecodable = (value: unknown): boolean =>
  typeof (value as EntryOutcome).outcome === "object";

export const pulsarEntries = fuzzTarget<Mutated>({
  name: "pulsar-entries",
  decoder: "decodeFrame then decodeEntry: a consumer's entry (@ruststream/pulsar/wire)",
  inputs: mutated(fc.constantFrom(...valid(messageFrames()))),
  corpus: () => {
    const two = batchPayload(["a", "b"]);
    const { ZLIB, ZSTD, LZ4 } = CompressionType;
    return [
      {
        name: "a batch count of -5 (dropped the connection, again and again, before)",
        input: entry({ numMessagesInBatch: -5 }, two),
      },
      {
        name: "a batch count of 0 (nothing delivered, nothing reported before)",
        input: entry({ numMessagesInBatch: 0 }, two),
      },
      {
        name: "a batch count of 1 for 2 messages (one lost before)",
        input: entry({ numMessagesInBatch: 1 }, two),
      },
      {
        name: "compression type 7 (delivered compressed before)",
        input: entry({ compression: 7, uncompressedSize: 2 }, two),
      },
      {
        name: "ZLIB, 256 MiB of zeros in 261 KB, declared 10 bytes (inflated whole before)",
        input: entry({ compression: ZLIB, uncompressedSize: 10 }, zlibOfZeros(256 * 1024 * 1024)),
      },
      {
        name: "ZSTD, 12 bytes declaring 1.1 GiB (+1.1 GiB of heap for good before)",
        input: entry(
          { compression: ZSTD, uncompressedSize: 10 },
          zstdOfRuns(1, 1_181_116_006).subarray(0, 12),
        ),
      },
      {
        name: "LZ4, 1 MiB holding 256 MiB, declared so (decoded whole before)",
        input: entry(
          { compression: LZ4, uncompressedSize: 256 * 1024 * 1024 },
          lz4OfZeros(256 * 1024 * 1024),
        ),
      },
      {
        name: "metadata that is no MessageMetadata (a FrameError and a reconnect before)",
        input: unchanged(
          encodePayloadFrame(command, Uint8Array.of(0, 0, 0, 3, 0xff, 0xff, 0xff, 1)).subarray(4),
        ),
      },
    ];
  },
  size: (input) => input.bytes.length,
  decode: (input) => decodeMessage(input.bytes),
  ownError,
  byLimit: ({ threw, value }) =>
    threw
      ? /exceeds the limit/.test((value as Error).message)
      : ((value as EntryOutcome).outcome as Undecodable).reason === "UncompressedSizeCorruption",
  refused: isUndecodable,
  check(input, { threw, value }) {
    if (threw)
      return untouched(input)
        ? `a valid frame was refused: ${(value as Error).message}`
        : undefined;
    const { declared, queued, outcome } = value as EntryOutcome;
    if (typeof outcome === "object") {
      if (queued !== 0) return `undecodable (${outcome.reason}), yet ${queued} messages queued`;
      return untouched(input) ? `a valid entry was undecodable: ${outcome.reason}` : undefined;
    }
    // Decoded: every message the entry declares is queued or skipped, none lost unreported.
    if (typeof outcome === "number" && queued + outcome !== declared)
      return `${queued} queued and ${outcome} skipped of ${declared} declared`;
    return undefined;
  },
  memoryBound: (input) => 4 * input.bytes.length + 3 * FUZZ_MAX_MESSAGE_SIZE,
  describe: describeInput,
});

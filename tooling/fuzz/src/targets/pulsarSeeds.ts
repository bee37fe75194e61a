// What the Pulsar targets share: valid encodings to mutate (commands a broker sends, MESSAGE
// frames of single messages and batches in every codec, batch payloads, compressed payloads), the
// limit they decode with, and what counts as the package's own error. The wire client's decoders
// are internal (no entry point exports them): their sources are fuzzed as the client runs them.
import { isRustStreamError } from "@ruststream/core";
import { encodeBatchEntry } from "../../../../packages/pulsar/src/wire/batch.js";
import {
  CommandType,
  CompressionType,
  LookupType,
} from "../../../../packages/pulsar/src/wire/commands/enums.js";
import type {
  BaseCommand,
  MessageMetadata,
} from "../../../../packages/pulsar/src/wire/commands/shapes.js";
import { compress, loadCodecs } from "../../../../packages/pulsar/src/wire/compression.js";
import { DecodeError } from "../../../../packages/pulsar/src/wire/errors.js";
import {
  encodeCommandFrame,
  encodeMessageSection,
  encodePayloadFrame,
  MAGIC_BROKER_ENTRY_METADATA,
} from "../../../../packages/pulsar/src/wire/frame.js";
import { hex, type Mutated } from "../mutate.js";

/** The limit the targets decode with: small, so that mutated sizes reach it often. */
export const FUZZ_MAX_MESSAGE_SIZE = 1024 * 1024;

/** The package's own errors: DecodeError (FrameError among them), an `invalid-argument`. */
export const ownError = (error: unknown): boolean =>
  error instanceof DecodeError && isRustStreamError(error, "invalid-argument");

/** Whether a thrown error is a refusal by a size limit. */
export const refusedByLimit = ({ threw, value }: { threw: boolean; value: unknown }): boolean =>
  threw && /above the max message size|exceeds the limit/.test((value as Error).message);

/** The seeds made from valid encodings (not a corpus's hostile inputs). */
const validSeeds = new WeakSet<Uint8Array>();

/**
 * Valid encodings as seeds, marked so that each, unmutated, must decode. Each is copied into a
 * plain Uint8Array: the encoders give Buffers, whose slice() shares their memory, so a mutation
 * made through it would change the seed itself.
 */
export function valid(seeds: readonly Uint8Array[]): Uint8Array[] {
  return seeds.map((seed) => {
    const copy = Uint8Array.from(seed);
    validSeeds.add(copy);
    return copy;
  });
}

/** True when the input is a valid seed, unmutated. */
export const untouched = (input: Mutated): boolean =>
  validSeeds.has(input.seed) &&
  input.firstChange === input.bytes.length &&
  input.bytes.length === input.seed.length;

/** A corpus input: bytes as they are, as a plain Uint8Array (see `valid`). */
export const unchanged = (bytes: Uint8Array): Mutated => {
  const copy = Uint8Array.from(bytes);
  return { seed: copy, bytes: copy, firstChange: copy.length };
};

export const describeInput = (input: Mutated): string =>
  `first change at ${input.firstChange}: ${hex(input.bytes)}`;

/** A big-endian u32 (or i32) in front of `rest`: how a target's input carries a count or a size. */
export function withU32(value: number, rest: Uint8Array): Uint8Array {
  const out = Buffer.alloc(4 + rest.length);
  out.writeUInt32BE(value >>> 0, 0);
  out.set(rest, 4);
  return out;
}

// ZSTD and SNAPPY load once, before any seed is made or decoded.
await loadCodecs();

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Commands a broker sends a client, one of each kind this client reads. */
export const brokerCommands: readonly BaseCommand[] = [
  {
    type: CommandType.CONNECTED,
    connected: {
      serverVersion: "Pulsar 4.0.7",
      protocolVersion: 20,
      maxMessageSize: 5 * 1024 * 1024,
    },
  },
  { type: CommandType.PING, ping: {} },
  { type: CommandType.PONG, pong: {} },
  { type: CommandType.SUCCESS, success: { requestId: 3 } },
  { type: CommandType.ERROR, error: { requestId: 4, error: 5, message: "consumer busy" } },
  {
    type: CommandType.PRODUCER_SUCCESS,
    producerSuccess: { requestId: 1, producerName: "p", lastSequenceId: -1n },
  },
  {
    type: CommandType.SEND_RECEIPT,
    sendReceipt: { producerId: 1, sequenceId: 7n, messageId: { ledgerId: 12n, entryId: 3n } },
  },
  {
    type: CommandType.SEND_ERROR,
    sendError: { producerId: 1, sequenceId: 8n, error: 9, message: "checksum" },
  },
  {
    type: CommandType.LOOKUP_RESPONSE,
    lookupTopicResponse: {
      requestId: 2,
      response: LookupType.Connect,
      brokerServiceUrl: "pulsar://b:6650",
      authoritative: true,
    },
  },
  {
    type: CommandType.PARTITIONED_METADATA_RESPONSE,
    partitionMetadataResponse: { requestId: 6, partitions: 3, response: 0 },
  },
  {
    type: CommandType.CLOSE_CONSUMER,
    closeConsumer: { consumerId: 2, requestId: 0, assignedBrokerServiceUrl: "pulsar://c:6650" },
  },
  { type: CommandType.CLOSE_PRODUCER, closeProducer: { producerId: 1, requestId: 0 } },
  {
    type: CommandType.ACTIVE_CONSUMER_CHANGE,
    activeConsumerChange: { consumerId: 2, isActive: true },
  },
  { type: CommandType.REACHED_END_OF_TOPIC, reachedEndOfTopic: { consumerId: 2 } },
  {
    type: CommandType.GET_LAST_MESSAGE_ID_RESPONSE,
    getLastMessageIdResponse: {
      requestId: 9,
      lastMessageId: { ledgerId: 4n, entryId: 40n, partition: 1 },
    },
  },
  {
    type: CommandType.AUTH_CHALLENGE,
    authChallenge: {
      serverVersion: "s",
      challenge: { authMethodName: "token", authData: text("x") },
      protocolVersion: 20,
    },
  },
  { type: CommandType.ACK_RESPONSE, ackResponse: { consumerId: 2, requestId: 11 } },
  {
    type: CommandType.TOPIC_MIGRATED,
    topicMigrated: { resourceId: 2, resourceType: 1, brokerServiceUrl: "pulsar://d:6650" },
  },
];

const message = (entryId: bigint): BaseCommand => ({
  type: CommandType.MESSAGE,
  message: { consumerId: 1, messageId: { ledgerId: 77n, entryId }, redeliveryCount: 0 },
});

/** A batch payload of these messages: the direct path's and the codec's (a key, properties). */
export function batchPayload(texts: readonly string[]): Uint8Array {
  return Buffer.concat(
    texts.map((t, i) =>
      encodeBatchEntry(
        i % 2 === 0
          ? { payloadSize: text(t).length, sequenceId: BigInt(i) }
          : {
              payloadSize: text(t).length,
              sequenceId: BigInt(i),
              partitionKey: `k${i}`,
              properties: [{ key: "n", value: `${i}` }],
            },
        text(t),
      ),
    ),
  );
}

export const batches: readonly Uint8Array[] = [
  batchPayload(["a"]),
  batchPayload(["one", "two", "three"]),
  batchPayload(["", "x".repeat(300), "y", "z".repeat(40)]),
];

const codecs = [
  CompressionType.NONE,
  CompressionType.LZ4,
  CompressionType.ZLIB,
  CompressionType.ZSTD,
  CompressionType.SNAPPY,
];

/** MESSAGE frames (the bytes after totalSize): a single message and a batch, in every codec. */
export function messageFrames(): Uint8Array[] {
  const frames: Uint8Array[] = [];
  let entry = 0n;
  for (const compression of codecs) {
    const single = text(`single message ${"payload ".repeat(8)}`);
    const batch = batches[1]!;
    for (const [payload, count] of [
      [single, undefined],
      [batch, 3],
    ] as const) {
      const metadata: MessageMetadata = {
        producerName: "p",
        sequenceId: entry,
        publishTime: 1_700_000_000_000,
        properties: [{ key: "k", value: "v" }],
      };
      if (count !== undefined) metadata.numMessagesInBatch = count;
      let body: Uint8Array = payload;
      if (compression !== CompressionType.NONE) {
        metadata.compression = compression;
        metadata.uncompressedSize = payload.length;
        body = compress(compression, payload);
      }
      frames.push(
        encodePayloadFrame(message(entry++), encodeMessageSection(metadata, body)).subarray(4),
      );
    }
  }
  // With the broker's own metadata in front (0x0e02), as a broker that adds it sends it.
  const plain = Buffer.from(
    encodePayloadFrame(
      message(entry),
      encodeMessageSection({ producerName: "p", sequenceId: 0n, publishTime: 1 }, text("plain")),
    ),
  ).subarray(4);
  const commandEnd = 4 + plain.readUInt32BE(0);
  const brokerPart = Buffer.alloc(6 + 2);
  brokerPart.writeUInt16BE(MAGIC_BROKER_ENTRY_METADATA, 0);
  brokerPart.writeUInt32BE(2, 2);
  brokerPart.set([0x08, 0x01], 6); // broker_timestamp = 1
  frames.push(
    Buffer.concat([plain.subarray(0, commandEnd), brokerPart, plain.subarray(commandEnd)]),
  );
  return frames;
}

/** Command frames (the bytes after totalSize). */
export const commandFrames = (): Uint8Array[] =>
  brokerCommands.map((command) => encodeCommandFrame(command).subarray(4));

/** Payloads compressed by `compression`: text, runs, random bytes, nothing. */
export function compressedPayloads(compression: number): { data: Uint8Array; size: number }[] {
  let seed = 12345;
  const random = Uint8Array.from({ length: 2000 }, () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed >>> 24;
  });
  return [
    text("hello hello hello hello ".repeat(30)),
    new Uint8Array(5000),
    random,
    new Uint8Array(0),
    batches[2]!,
  ].map((input) => ({
    data: compress(compression, input),
    size: input.length,
  }));
}

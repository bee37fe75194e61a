// Protobuf commands and framing without a broker.

import { bytes, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  encodeBatchEntry,
  readBatch,
  sizeAndSequenceEntryLength,
  writeSizeAndSequenceEntry,
} from "../src/wire/batch.js";
import { baseCommand, messageMetadata, singleMessageMetadata } from "../src/wire/commands/codec.js";
import { CommandType } from "../src/wire/commands/enums.js";
import type { BaseCommand, SingleMessageMetadata } from "../src/wire/commands/shapes.js";
import { crc32c } from "../src/wire/crc32c.js";
import {
  buildPayloadFrame,
  decodeFrame,
  encodeCommandFrame,
  encodeMessageSection,
  encodePayloadFrame,
  FrameReader,
  MAGIC_CRC32C,
} from "../src/wire/frame.js";
import { MessageId } from "../src/wire/index.js";

describe("protobuf commands", () => {
  it("encodes proto2 required fields even when zero", () => {
    // SEND{producer_id=0, sequence_id=0}: both required, both written: 08 00 10 00.
    const encoded = baseCommand.encode({
      type: CommandType.SEND,
      send: { producerId: 0, sequenceId: 0n },
    });
    expect(Buffer.from(encoded).toString("hex")).toBe("0806320408001000");
  });

  it("writes an optional field set to zero or false (proto2 presence, not proto3's)", () => {
    // durable=false differs from the broker's default (true); partition 0 and batch index 0 from -1.
    const subscribe = baseCommand.encode({
      type: CommandType.SUBSCRIBE,
      subscribe: {
        topic: "t",
        subscription: "s",
        subType: 0,
        consumerId: 0,
        requestId: 0,
        durable: false,
      },
    });
    expect(Buffer.from(subscribe).toString("hex")).toContain("4000"); // field 8, varint 0
    const decoded = baseCommand.decode(
      baseCommand.encode({
        type: CommandType.ACK,
        ack: {
          consumerId: 0,
          ackType: 0,
          messageId: [{ ledgerId: 1n, entryId: 0n, partition: 0, batchIndex: 0 }],
        },
      }),
    );
    expect(decoded.ack!.messageId![0]).toEqual({
      ledgerId: 1n,
      entryId: 0n,
      partition: 0,
      batchIndex: 0,
    });
  });

  it("round-trips 64-bit ids as bigint without rounding, and keeps absent fields absent", () => {
    const command: BaseCommand = {
      type: CommandType.MESSAGE,
      message: {
        consumerId: 2 ** 40 + 3,
        messageId: { ledgerId: 2n ** 63n + 5n, entryId: 2n ** 53n + 1n, batchIndex: 4 },
        redeliveryCount: 2,
        ackSet: [-1n, 5n],
        consumerEpoch: 9n,
      },
    };
    const decoded = baseCommand.decode(baseCommand.encode(command));
    expect(decoded).toEqual(command);
    expect(decoded.message!.messageId.partition).toBeUndefined();
  });

  it("round-trips CONNECT with its feature flags and auth data", () => {
    const command: BaseCommand = {
      type: CommandType.CONNECT,
      connect: {
        clientVersion: "test",
        protocolVersion: 20,
        authMethodName: "token",
        authData: bytes("secret"),
        featureFlags: { supportsAuthRefresh: true, supportsBrokerEntryMetadata: true },
      },
    };
    const decoded = baseCommand.decode(baseCommand.encode(command));
    expect(decoded.connect!.clientVersion).toBe("test");
    expect(text(decoded.connect!.authData!)).toBe("secret");
    expect(decoded.connect!.featureFlags).toEqual(command.connect!.featureFlags);
  });

  it("round-trips every command this client sends", () => {
    const id = { ledgerId: 7n, entryId: 8n };
    const commands: BaseCommand[] = [
      {
        type: CommandType.SUBSCRIBE,
        subscribe: {
          topic: "persistent://public/default/t",
          subscription: "s",
          subType: 3,
          consumerId: 1,
          requestId: 2,
          durable: true,
          initialPosition: 1,
          keySharedMeta: { keySharedMode: 1, hashRanges: [{ start: 0, end: 100 }] },
          consumerEpoch: 0n,
        },
      },
      {
        type: CommandType.PRODUCER,
        producer: { topic: "t", producerId: 3, requestId: 4, epoch: 0n, producerAccessMode: 0 },
      },
      { type: CommandType.FLOW, flow: { consumerId: 0, messagePermits: 1000 } },
      { type: CommandType.ACK, ack: { consumerId: 1, ackType: 0, messageId: [id, id] } },
      {
        type: CommandType.SEEK,
        seek: { consumerId: 1, requestId: 5, messagePublishTime: 1_700_000_000_000 },
      },
      {
        type: CommandType.REDELIVER_UNACKNOWLEDGED_MESSAGES,
        redeliverUnacknowledgedMessages: { consumerId: 1, messageIds: [id] },
      },
      { type: CommandType.LOOKUP, lookupTopic: { topic: "t", requestId: 6, authoritative: false } },
      { type: CommandType.PARTITIONED_METADATA, partitionMetadata: { topic: "t", requestId: 7 } },
      { type: CommandType.PING, ping: {} },
    ];
    for (const command of commands)
      expect(baseCommand.decode(baseCommand.encode(command))).toEqual(command);
  });

  it("round-trips message metadata and a message id's bytes", () => {
    const metadata = {
      producerName: "p",
      sequenceId: 0n,
      publishTime: 1_700_000_000_123,
      properties: [{ key: "a", value: "b" }],
      partitionKey: "k",
      compression: 1,
      uncompressedSize: 10,
      numMessagesInBatch: 3,
      deliverAtTime: 1_700_000_000_999,
    };
    expect(messageMetadata.decode(messageMetadata.encode(metadata))).toEqual(metadata);
    const id = new MessageId(12n, 34n, 2, 5, 9);
    expect(MessageId.fromBytes(id.toBytes())).toEqual(id);
    expect(MessageId.parse(id.toString()).equals(id)).toBe(true);
    expect(new MessageId(1n, 2n).compareTo(new MessageId(1n, 3n))).toBeLessThan(0);
  });
});

describe("framing", () => {
  it("lays out a simple frame as [totalSize][commandSize][command]", () => {
    const frame = Buffer.from(encodeCommandFrame({ type: CommandType.PING, ping: {} }));
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
    expect(frame.readUInt32BE(4)).toBe(frame.length - 8);
    expect(decodeFrame(frame.subarray(4)).command.type).toBe(CommandType.PING);
  });

  it("lays out a payload frame with magic 0x0e01 and a CRC-32C over metadata and payload", () => {
    const section = encodeMessageSection(
      { producerName: "p", sequenceId: 5n, publishTime: 1 },
      bytes("payload"),
    );
    const frame = Buffer.from(
      encodePayloadFrame(
        { type: CommandType.SEND, send: { producerId: 1, sequenceId: 5n, numMessages: 1 } },
        section,
      ),
    );
    const commandSize = frame.readUInt32BE(4);
    const at = 8 + commandSize;
    expect(frame.readUInt16BE(at)).toBe(MAGIC_CRC32C);
    expect(frame.readUInt32BE(at + 2)).toBe(crc32c(frame.subarray(at + 6)));
    const decoded = decodeFrame(frame.subarray(4));
    expect(decoded.payload!.checksumValid).toBe(true);
    expect(decoded.payload!.metadata.sequenceId).toBe(5n);
    expect(text(decoded.payload!.payload)).toBe("payload");
  });

  it("builds a payload frame in place byte for byte as encodePayloadFrame does", () => {
    const command: BaseCommand = {
      type: CommandType.SEND,
      send: { producerId: 3, sequenceId: 70_000n, numMessages: 2, highestSequenceId: 70_001n },
    };
    const metadata = {
      producerName: "p",
      sequenceId: 70_000n,
      publishTime: 9,
      numMessagesInBatch: 2,
    };
    for (const payload of [new Uint8Array(0), bytes("x"), new Uint8Array(4099).fill(7)]) {
      const built = buildPayloadFrame(command, metadata, payload.length, (frame, at) =>
        frame.set(payload, at),
      );
      expect(built).toEqual(encodePayloadFrame(command, encodeMessageSection(metadata, payload)));
    }
  });

  it("reports a payload whose checksum does not match", () => {
    const section = encodeMessageSection(
      { producerName: "p", sequenceId: 0n, publishTime: 1 },
      bytes("abc"),
    );
    const frame = encodePayloadFrame(
      { type: CommandType.SEND, send: { producerId: 0, sequenceId: 0n } },
      section,
    );
    frame[frame.length - 1] = frame[frame.length - 1]! ^ 0xff;
    expect(decodeFrame(frame.subarray(4)).payload!.checksumValid).toBe(false);
  });

  it("reads frames split at every byte and several frames per chunk", () => {
    const frames = [
      encodeCommandFrame({ type: CommandType.PING, ping: {} }),
      encodePayloadFrame(
        { type: CommandType.SEND, send: { producerId: 1, sequenceId: 1n } },
        encodeMessageSection(
          { producerName: "p", sequenceId: 1n, publishTime: 1 },
          bytes("x".repeat(300)),
        ),
      ),
      encodeCommandFrame({ type: CommandType.PONG, pong: {} }),
    ];
    const stream = Buffer.concat(frames);
    for (const step of [1, 3, 17, stream.length]) {
      const reader = new FrameReader();
      const got: number[] = [];
      for (let at = 0; at < stream.length; at += step)
        for (const frame of reader.push(stream.subarray(at, at + step)))
          got.push(frame.command.type);
      expect(got).toEqual([CommandType.PING, CommandType.SEND, CommandType.PONG]);
    }
  });

  it("refuses a frame larger than the limit that holds no MESSAGE, once its first bytes are in", () => {
    // (A MESSAGE that large is skipped instead: oversizedFrameReader.test.ts.)
    const reader = new FrameReader(1000);
    const frame = Buffer.alloc(5004);
    frame.set(encodeCommandFrame({ type: CommandType.PING, ping: {} }));
    frame.writeUInt32BE(5000, 0);
    expect(reader.push(frame.subarray(0, 8))).toEqual([]);
    expect(() => reader.push(frame.subarray(8))).toThrow(
      "a frame of 5000 bytes exceeds the limit of 1000: a PING command, which is no entry to skip",
    );
  });
});

describe("batches", () => {
  it("concatenates [size][SingleMessageMetadata][payload] and reads it back", () => {
    const batch = Buffer.concat([
      encodeBatchEntry({ payloadSize: 3, partitionKey: "a", sequenceId: 0n }, bytes("one")),
      encodeBatchEntry(
        { payloadSize: 0, properties: [{ key: "x", value: "y" }] },
        new Uint8Array(),
      ),
      encodeBatchEntry({ payloadSize: 5 }, bytes("three")),
    ]);
    const entries = readBatch(batch, 3);
    expect(entries.map((e) => text(e.payload))).toEqual(["one", "", "three"]);
    expect(entries[0]!.metadata.partitionKey).toBe("a");
    expect(entries[1]!.metadata.properties).toEqual([{ key: "x", value: "y" }]);
    expect(() => readBatch(batch, 4)).toThrow(/ends before message 3/);
    expect(singleMessageMetadata.decode(singleMessageMetadata.encode({ payloadSize: 0 }))).toEqual({
      payloadSize: 0,
    });
  });

  // encodeBatchEntry and readBatch write and read payload_size + sequence_id themselves (the common
  // case): the bytes and the values must be the codec's, at every varint length and past the
  // direct path's limits (2^49 when reading, 2^53 when writing), where the codec takes over.
  it("writes a size-and-sequence entry in place as encodeBatchEntry does", () => {
    // What a producer writes straight into its frame, against the entry on its own.
    for (const size of [0, 1, 127, 128, 16_384])
      for (const sequence of [0, 127, 128, 2 ** 35, Number.MAX_SAFE_INTEGER]) {
        const payload = new Uint8Array(size).fill(5);
        const length = sizeAndSequenceEntryLength(size, sequence);
        const out = Buffer.alloc(length + 3);
        expect(writeSizeAndSequenceEntry(out, 3, payload, sequence)).toBe(length + 3);
        expect(out.subarray(3)).toEqual(
          encodeBatchEntry({ payloadSize: size, sequenceId: BigInt(sequence) }, payload),
        );
      }
  });

  it("writes and reads size-and-sequence entries exactly as the protobuf codec does", () => {
    const sizes = [0, 1, 127, 128, 16_383, 16_384, 2_097_152, 0x7fffffff];
    const sequences = [
      0n,
      1n,
      127n,
      128n,
      2n ** 35n,
      2n ** 49n - 1n,
      2n ** 49n,
      2n ** 53n - 1n,
      2n ** 53n,
      2n ** 64n - 1n,
    ];
    const cases: SingleMessageMetadata[] = [{ payloadSize: 7 }];
    for (const payloadSize of sizes)
      for (const sequenceId of sequences) cases.push({ payloadSize, sequenceId });
    for (const metadata of cases) {
      const payload = new Uint8Array(metadata.payloadSize > 64 ? 3 : metadata.payloadSize).fill(9);
      const entry = Buffer.from(encodeBatchEntry(metadata, payload));
      const meta = singleMessageMetadata.encode(metadata);
      expect(entry.readUInt32BE(0)).toBe(meta.length);
      expect(Buffer.from(entry.subarray(4, 4 + meta.length))).toEqual(Buffer.from(meta));
      // Read back with a payload of the size it names (up to 2 MiB: larger ones are checked as
      // bytes above only).
      if (metadata.payloadSize > 2_097_152) continue;
      const inBatch = Buffer.concat([
        entry.subarray(0, 4 + meta.length),
        new Uint8Array(metadata.payloadSize),
      ]);
      const [read] = readBatch(inBatch, 1);
      expect(read!.metadata).toEqual(singleMessageMetadata.decode(meta));
      expect(read!.metadata).toEqual(metadata);
    }
    // Fields in the other order, a field twice, and any other field go to the codec, which reads
    // them as before.
    const reordered = Buffer.from([0x40, 0x05, 0x18, 0x02, 0xaa, 0xbb]);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(4);
    expect(readBatch(Buffer.concat([header, reordered]), 1)[0]!.metadata).toEqual({
      payloadSize: 2,
      sequenceId: 5n,
    });
    const keyed = encodeBatchEntry(
      { payloadSize: 1, partitionKey: "k", sequenceId: 3n },
      bytes("x"),
    );
    expect(readBatch(keyed, 1)[0]!.metadata).toEqual({
      payloadSize: 1,
      partitionKey: "k",
      sequenceId: 3n,
    });
  });
});

// Bytes from the broker that cannot be read, against a scripted broker (the real one filters entries
// whose metadata it cannot parse, and never damages its own commands). An entry whose metadata
// cannot be read is undecodable: acked with its validation error on the same connection, and the
// messages after it delivered. A command that cannot be read closes the connection once, with the
// FrameError as the reason, and the consumer subscribes again on a new one. A frame over the
// connection's limit holding a MESSAGE is an undecodable entry, its payload skipped unread; holding
// an answer, it fails its request for good before the connection closes, so nothing asks again and
// gets the same answer. Before (issue 40): every frame over the limit dropped the connection; the
// unreadable metadata was a FrameError too, so the connection dropped, the broker sent the same
// entry to the next subscribe, and again; and a damaged command's reason was protobufjs's
// RangeError.
import { bytes, text } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { baseCommand } from "../src/wire/commands/codec.js";
import { CommandType, ValidationError } from "../src/wire/commands/enums.js";
import type { BaseCommand } from "../src/wire/commands/shapes.js";
import {
  encodeCommandFrame,
  encodeMessageSection,
  encodePayloadFrame,
  FrameError,
} from "../src/wire/frame.js";
import { PulsarClient } from "../src/wire/index.js";
import { parseBrokerUrl } from "../src/wire/serviceUrl.js";
import type { UndecodableEntry } from "../src/wire/undecodable.js";
import { capture } from "./captureLog.js";
import { eventually } from "./env.js";
import { type Script, scriptedBroker } from "./scriptedBroker.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const messageCommand = (consumerId: number, entryId: bigint): BaseCommand => ({
  type: CommandType.MESSAGE,
  message: { consumerId, messageId: { ledgerId: 7n, entryId } },
});

function goodMessage(consumerId: number, entryId: bigint, payload: string): Uint8Array {
  const section = encodeMessageSection(
    { producerName: "scripted", sequenceId: entryId, publishTime: 1 },
    bytes(payload),
  );
  return encodePayloadFrame(messageCommand(consumerId, entryId), section);
}

/** Answers SUBSCRIBE and CLOSE_CONSUMER, and on each connection's first FLOW writes what `push` gives. */
function consumerScript(push: (consumerId: number, connection: number) => Uint8Array): Script {
  const flowed = new Set<number>();
  return (command, connection) => {
    const requestId = command.subscribe?.requestId ?? command.closeConsumer?.requestId;
    if (requestId !== undefined) {
      connection.reply({ type: CommandType.SUCCESS, success: { requestId } });
      return true;
    }
    if (command.type === CommandType.FLOW) {
      if (!flowed.has(connection.index)) {
        flowed.add(connection.index);
        connection.socket.write(push(command.flow!.consumerId, connection.index));
      }
      return true;
    }
    return command.type === CommandType.ACK;
  };
}

describe("an entry whose metadata cannot be read", () => {
  it("is acked with ChecksumMismatch on the same connection, logged, and the message after it delivered", async () => {
    const b = await scriptedBroker(
      consumerScript((consumerId) =>
        Buffer.concat([
          // [metadataSize 3][3 bytes that are no MessageMetadata][payload], checksum correct.
          encodePayloadFrame(
            messageCommand(consumerId, 1n),
            Uint8Array.of(0, 0, 0, 3, 0xff, 0xff, 0xff, 1, 2, 3),
          ),
          goodMessage(consumerId, 2n, "after"),
        ]),
      ),
    );
    cleanups.push(() => b.close());
    const log = capture();
    const client = new PulsarClient({
      serviceUrl: b.url,
      logger: log.logger,
      backoff: { initialMs: 10, maxMs: 20 },
    });
    cleanups.push(() => client.close());
    const consumer = await client.subscribe({ topic: "t", subscription: "s" });
    const after = await consumer.receive({ timeoutMs: 5000 });
    expect(text(after.payload)).toBe("after");
    const connection = b.connections[0]!;
    await eventually(
      () => connection.received.some((c) => c.ack?.validationError !== undefined),
      5000,
      "the ack of the unreadable entry",
    );
    expect(
      connection.received.find((c) => c.ack?.validationError !== undefined)!.ack,
    ).toMatchObject({
      messageId: [{ ledgerId: 7n, entryId: 1n }],
      validationError: ValidationError.ChecksumMismatch,
    });
    expect(log.errors()).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({
          messageId: "7:1:-1:-1",
          reason: "ChecksumMismatch",
          error: expect.stringMatching(/^unreadable entry: unreadable MessageMetadata/),
        }),
      }),
    ]);
    expect(b.connections).toHaveLength(1);
    expect(consumer.partitionConsumers[0]!.connects).toBe(1);
  });
});

describe("a command that cannot be read", () => {
  it("closes the connection once, the FrameError its reason, and the consumer subscribes again", async () => {
    const damaged = Buffer.from(encodeCommandFrame({ type: CommandType.PING, ping: {} }));
    damaged[8] = 0xff; // a field tag with a wire type protobuf does not have
    const b = await scriptedBroker(
      consumerScript((consumerId, index) =>
        index === 0 ? damaged : goodMessage(consumerId, 1n, "on the next connection"),
      ),
    );
    cleanups.push(() => b.close());
    const client = new PulsarClient({ serviceUrl: b.url, backoff: { initialMs: 10, maxMs: 20 } });
    cleanups.push(() => client.close());
    const first = await client.connection(parseBrokerUrl(b.url));
    const reasons: Error[] = [];
    first.onClose((error) => reasons.push(error));
    const consumer = await client.subscribe({ topic: "t", subscription: "s" });
    const message = await consumer.receive({ timeoutMs: 5000 });
    expect(text(message.payload)).toBe("on the next connection");
    expect(reasons).toEqual([
      expect.objectContaining({
        code: "broker-failure",
        message: expect.stringMatching(/unreadable frame \(FrameError: unreadable command: /),
        cause: expect.any(FrameError),
      }),
    ]);
    expect(b.connections).toHaveLength(2);
    expect(b.connections[0]!.closed).toBe(true);
    expect(consumer.partitionConsumers[0]!.connects).toBe(2);
  });
});

/** A frame of `command` followed by `padding` bytes: over the limit however small its command. */
function paddedFrame(command: BaseCommand, padding: number): Buffer {
  const body = baseCommand.encode(command);
  const frame = Buffer.alloc(8 + body.length + padding);
  frame.writeUInt32BE(frame.length - 4, 0);
  frame.writeUInt32BE(body.length, 4);
  frame.set(body, 8);
  return frame;
}

describe("a frame over the connection's limit", () => {
  // The broker says 1 KiB: the connection reads frames of up to 1 KiB + 40 KiB.
  const maxMessageSize = 1024;

  it("holding a MESSAGE: its entry goes to the undecodable handler without its payload, the message after it delivered, on the same connection", async () => {
    const b = await scriptedBroker(
      consumerScript((consumerId) => {
        const section = encodeMessageSection(
          {
            producerName: "scripted",
            sequenceId: 1n,
            publishTime: 1,
            properties: [{ key: "k", value: "v" }],
          },
          new Uint8Array(100 * 1024),
        );
        return Buffer.concat([
          encodePayloadFrame(messageCommand(consumerId, 1n), section),
          goodMessage(consumerId, 2n, "after"),
        ]);
      }),
      { maxMessageSize },
    );
    cleanups.push(() => b.close());
    const client = new PulsarClient({
      serviceUrl: b.url,
      logger: capture().logger,
      backoff: { initialMs: 10, maxMs: 20 },
    });
    cleanups.push(() => client.close());
    const handed: UndecodableEntry[] = [];
    const consumer = await client.subscribe({
      topic: "t",
      subscription: "s",
      undecodable: {
        destination: "t-s-DLQ",
        handle: async (entry) => {
          handed.push(entry);
        },
      },
    });
    const after = await consumer.receive({ timeoutMs: 5000 });
    expect(text(after.payload)).toBe("after");
    const connection = b.connections[0]!;
    // Acked (an ordinary ack) once the handler resolved.
    await eventually(
      () => connection.received.some((c) => c.ack?.messageId?.[0]?.entryId === 1n),
      5000,
      "the ack of the entry over the limit",
    );
    expect(handed).toEqual([
      expect.objectContaining({
        reason: "UncompressedSizeCorruption",
        error: expect.stringMatching(
          /^a frame of \d+ bytes exceeds the limit of 41984: its payload was skipped unread$/,
        ),
        metadata: expect.objectContaining({ properties: [{ key: "k", value: "v" }] }),
        payload: new Uint8Array(0),
      }),
    ]);
    expect(handed[0]!.messageId.toString()).toBe("7:1:-1:-1");
    expect(b.connections).toHaveLength(1);
    expect(consumer.partitionConsumers[0]!.connects).toBe(1);
  });

  it("answering a request: the request fails for good with the reason, the connection closes once, and nothing asks again", async () => {
    const b = await scriptedBroker(
      (command, connection) => {
        const requestId = command.subscribe?.requestId;
        if (requestId === undefined) return false;
        connection.socket.write(
          paddedFrame({ type: CommandType.SUCCESS, success: { requestId } }, 64 * 1024),
        );
        return true;
      },
      { maxMessageSize },
    );
    cleanups.push(() => b.close());
    // A short operation timeout: a subscribe retried on every new connection ends within it.
    const client = new PulsarClient({
      serviceUrl: b.url,
      backoff: { initialMs: 10, maxMs: 20 },
      operationTimeoutMs: 3000,
    });
    cleanups.push(() => client.close());
    const first = await client.connection(parseBrokerUrl(b.url));
    const reasons: Error[] = [];
    first.onClose((error) => reasons.push(error));
    await expect(client.subscribe({ topic: "t", subscription: "s" })).rejects.toMatchObject({
      code: "broker-failure",
      message: expect.stringMatching(
        /^subscribe s on .*t: the broker's answer is larger than this connection reads \(a frame of \d+ bytes exceeds the limit of 41984: a SUCCESS command, which is no entry to skip\); not asked again/,
      ),
    });
    expect(reasons).toEqual([
      expect.objectContaining({
        code: "broker-failure",
        cause: expect.objectContaining({ name: "FrameError" }),
      }),
    ]);
    // The subscribe failed for good, so nothing attaches again: one connection, one SUBSCRIBE.
    expect(b.connections).toHaveLength(1);
    expect(client.connectionsOpened).toBe(1);
    expect(b.connections[0]!.received.filter((c) => c.subscribe !== undefined)).toHaveLength(1);
  });
});

// Bytes from the broker that cannot be read, against a scripted broker (the real one filters entries
// whose metadata it cannot parse, and never damages its own commands). An entry whose metadata
// cannot be read is undecodable: acked with its validation error on the same connection, and the
// messages after it delivered. A command that cannot be read closes the connection once, with the
// FrameError as the reason, and the consumer subscribes again on a new one. Before (issue 40): the
// unreadable metadata was a FrameError too, so the connection dropped, the broker sent the same
// entry to the next subscribe, and again; and a damaged command's reason was protobufjs's
// RangeError.
import { bytes, text } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
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

// A batch whose declared count disagrees with the messages it holds (issue 40): an error, never a
// silent drop. Before, a count of -1 gave no messages and then a RangeError outside the decoder's
// handling (allocating the batch's ack tracker), which dropped the connection, and the broker sent
// the same entry again after the reconnect; a count of 0 delivered nothing and reported nothing; a
// count lower than the messages held delivered the first ones and dropped the rest unseen.
import { bytes, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { encodeBatchEntry, readBatch } from "../src/wire/batch.js";
import type { CommandMessage, MessageMetadata } from "../src/wire/commands/shapes.js";
import { Acks } from "../src/wire/consumer/acks.js";
import { decodeEntry, type EntrySource } from "../src/wire/consumer/entryDecoding.js";
import type { Message, MessageOwner } from "../src/wire/consumer/message.js";
import { DecodeError } from "../src/wire/errors.js";
import { DEFAULT_MAX_MESSAGE_SIZE, type PayloadSection } from "../src/wire/frame.js";
import { Queue } from "../src/wire/queue.js";

/** A batch payload of these texts, each with its payload size only. */
const batchOf = (...texts: string[]): Uint8Array =>
  Buffer.concat(texts.map((t) => encodeBatchEntry({ payloadSize: bytes(t).length }, bytes(t))));

describe("readBatch", () => {
  it("refuses a count below 1, which no batch has", () => {
    for (const count of [-1, -5, 0, -2147483648])
      expect(() => readBatch(batchOf("a", "b"), count)).toThrow(
        new DecodeError(`a batch count of ${count} (a batch holds at least 1 message)`),
      );
    expect(() => readBatch(new Uint8Array(0), 0)).toThrow(DecodeError);
  });

  it("refuses a count lower than the messages held: the bytes after them are an error", () => {
    expect(() => readBatch(batchOf("a", "b", "c"), 2)).toThrow(
      new DecodeError("the batch declares a count of 2, and 7 bytes follow its messages"),
    );
  });

  it("refuses a count higher than the messages held", () => {
    expect(() => readBatch(batchOf("a", "b"), 3)).toThrow(
      new DecodeError("the batch ends before message 2 of the 3 it declares"),
    );
    expect(() => readBatch(batchOf("a"), 2147483647)).toThrow(DecodeError);
  });

  it("reads a batch whose count matches, message by message", () => {
    expect(readBatch(batchOf("a", "bc", ""), 3).map((e) => text(e.payload))).toEqual([
      "a",
      "bc",
      "",
    ]);
  });
});

describe("an entry whose batch count lies", () => {
  // What decodeEntry needs of its consumer: the owner is only kept on the messages it queues.
  const owner: MessageOwner = {
    ack: () => undefined,
    ackCumulative: () => undefined,
    nack: () => undefined,
  };
  const source: EntrySource = {
    topic: "persistent://public/default/t",
    partition: -1,
    owner,
    consumerId: 1,
    acks: new Acks({ connection: () => undefined, consumerId: () => 1 }, 10, 0),
    maxMessageSize: DEFAULT_MAX_MESSAGE_SIZE,
  };
  const command: CommandMessage = { consumerId: 1, messageId: { ledgerId: 9n, entryId: 4n } };
  const section = (numMessagesInBatch: number, payload: Uint8Array): PayloadSection => {
    const metadata: MessageMetadata = {
      producerName: "p",
      sequenceId: 0n,
      publishTime: 1,
      numMessagesInBatch,
    };
    return { metadata, payload, checksumValid: true, checksummed: true };
  };

  it.each([
    [-5, /batch count of -5/],
    [-1, /batch count of -1/],
    [0, /batch count of 0/],
    [1, /count of 1, and 7 bytes follow/],
    [2147483647, /ends before message 2 of the 2147483647/],
  ])("of %i for two messages is undecodable (BatchDeSerializeError), nothing queued, nothing thrown", (count, why) => {
    const queue = new Queue<Message>();
    const outcome = decodeEntry(command, section(count, batchOf("a", "b")), source, queue);
    expect(outcome).toEqual({ reason: "BatchDeSerializeError", error: expect.any(DecodeError) });
    expect(String((outcome as { error: Error }).error.message)).toMatch(why);
    expect(queue.length).toBe(0);
  });

  it("of 2 for two messages queues both", () => {
    const queue = new Queue<Message>();
    expect(decodeEntry(command, section(2, batchOf("a", "b")), source, queue)).toBe(0);
    expect([queue.shift(), queue.shift()].map((m) => text(m!.payload))).toEqual(["a", "b"]);
  });
});

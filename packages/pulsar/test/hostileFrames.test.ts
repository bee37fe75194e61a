// Frames and commands as a broker on a damaged link, or a hostile peer, might send them (issue 40):
// what cannot be a command is the package's FrameError, never protobufjs's own error; a value of an
// enum this client does not know is an error, except in the open ones, where it reads as its number
// instead of vanishing; and a payload section that cannot be read leaves the frame readable, so the
// entry it holds can be handled as undecodable while the connection goes on.
import { bytes } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { baseCommand, messageMetadata } from "../src/wire/commands/codec.js";
import { CommandType, CompressionType, LookupType } from "../src/wire/commands/enums.js";
import type { BaseCommand } from "../src/wire/commands/shapes.js";
import { DecodeError, PulsarServerError } from "../src/wire/errors.js";
import {
  decodeFrame,
  encodeCommandFrame,
  encodeMessageSection,
  encodePayloadFrame,
  FrameError,
  FrameReader,
} from "../src/wire/frame.js";

/** A frame's bytes after totalSize: [commandSize][command bytes][rest]. */
function frameOf(command: Uint8Array, rest: Uint8Array = new Uint8Array(0)): Buffer {
  const frame = Buffer.alloc(4 + command.length + rest.length);
  frame.writeUInt32BE(command.length, 0);
  frame.set(command, 4);
  frame.set(rest, 4 + command.length);
  return frame;
}

const message: BaseCommand = {
  type: CommandType.MESSAGE,
  message: { consumerId: 1, messageId: { ledgerId: 7n, entryId: 3n } },
};

/** A MESSAGE frame (after totalSize) carrying `section` under a correct checksum. */
function messageFrame(section: Uint8Array): Buffer {
  return Buffer.from(encodePayloadFrame(message, section)).subarray(4);
}

describe("damaged command bytes", () => {
  it("are a FrameError naming what broke, not protobufjs's RangeError", () => {
    const command = baseCommand.encode({ type: CommandType.PING, ping: {} });
    // A field's length running past the command's end.
    const truncated = Uint8Array.of(...command.subarray(0, command.length - 1), 0x12, 0x7f);
    for (const bytes of [truncated, Uint8Array.of(0x08, 0xff), Uint8Array.of(0xff, 0xff, 0xff)]) {
      const decoding = () => decodeFrame(frameOf(bytes));
      expect(decoding).toThrow(FrameError);
      expect(decoding).toThrow(/unreadable command/);
    }
  });

  it("close the stream where they are read: FrameReader throws the FrameError", () => {
    const good = encodeCommandFrame({ type: CommandType.PING, ping: {} });
    const bad = Buffer.from(good);
    bad[8] = 0xff; // the command's first byte: a field tag with a wire type protobuf does not have
    expect(() => new FrameReader().push(Buffer.concat([good, bad]))).toThrow(FrameError);
  });

  it("a command type this client does not know is a FrameError", () => {
    // type = 99: a varint protobuf reads, a CommandType no version of the protocol has.
    expect(() => decodeFrame(frameOf(Uint8Array.of(0x08, 99)))).toThrow(
      expect.objectContaining({
        name: "FrameError",
        message: expect.stringMatching(/CommandType 99 is unknown/),
      }),
    );
  });

  it("a command without the body its type names is a FrameError", () => {
    // type = MESSAGE, and no CommandMessage: the dispatcher would read a field that is not there.
    expect(() => decodeFrame(frameOf(Uint8Array.of(0x08, CommandType.MESSAGE)))).toThrow(
      expect.objectContaining({
        name: "FrameError",
        message: "a MESSAGE command without its body",
      }),
    );
  });
});

describe("enum values this client does not know", () => {
  it("are a DecodeError in a command, not a field read as absent", () => {
    const answer = baseCommand.encode({
      type: CommandType.LOOKUP_RESPONSE,
      lookupTopicResponse: { requestId: 1, response: 9 as never },
    });
    expect(() => baseCommand.decode(answer)).toThrow(DecodeError);
    expect(() => baseCommand.decode(answer)).toThrow(/LookupType 9 is unknown/);
    // A known value still reads.
    const known = baseCommand.encode({
      type: CommandType.LOOKUP_RESPONSE,
      lookupTopicResponse: { requestId: 1, response: LookupType.Connect },
    });
    expect(baseCommand.decode(known).lookupTopicResponse!.response).toBe(LookupType.Connect);
  });

  it("read as their number in a message's compression, so the entry reaches the undecodable path", () => {
    const metadata = messageMetadata.decode(
      messageMetadata.encode({
        producerName: "p",
        sequenceId: 1n,
        publishTime: 1,
        compression: 7 as never,
        uncompressedSize: 5,
      }),
    );
    expect(metadata.compression).toBe(7);
    expect(Object.values(CompressionType)).not.toContain(7);
  });

  it("read as their number in a newer broker's ServerError, named ServerError(<n>)", () => {
    const decoded = decodeFrame(
      frameOf(
        baseCommand.encode({
          type: CommandType.ERROR,
          error: { requestId: 4, error: 31 as never, message: "new" },
        }),
      ),
    );
    expect(decoded.command.error).toEqual({ requestId: 4, error: 31, message: "new" });
    expect(new PulsarServerError(31, "new").serverError).toBe("ServerError(31)");
  });
});

describe("a MESSAGE whose payload section cannot be read", () => {
  const metadata = { producerName: "p", sequenceId: 1n, publishTime: 1 };

  it("decodes, its section marked unreadable, when its metadata is no MessageMetadata", () => {
    // [metadataSize 3][3 bytes no MessageMetadata is][payload], under a correct checksum.
    const section = Uint8Array.of(0, 0, 0, 3, 0xff, 0xff, 0xff, 1, 2, 3);
    const frame = decodeFrame(messageFrame(section));
    expect(frame.command).toEqual(message);
    expect(frame.payload).toMatchObject({
      checksumValid: true,
      checksummed: true,
      unreadable: expect.stringMatching(/unreadable MessageMetadata/),
    });
    // As it travelled: the whole checksummed section, since where the payload starts is unknown.
    expect([...frame.payload!.payload]).toEqual([...section]);
  });

  it("decodes, its section marked unreadable, when its metadata size overruns the frame", () => {
    const section = Buffer.from(encodeMessageSection(metadata, bytes("payload")));
    section.writeUInt32BE(0x7fffffff, 0);
    expect(decodeFrame(messageFrame(section)).payload!.unreadable).toBe(
      "metadata size 2147483647 exceeds the frame",
    );
  });

  it("decodes, its section marked unreadable, when it ends before its metadata size", () => {
    const frame = decodeFrame(messageFrame(Uint8Array.of(0, 0)));
    expect(frame.payload!.unreadable).toMatch(/ends before its metadata size/);
  });

  it("decodes, its section marked unreadable, when the broker's entry metadata overruns", () => {
    const section = encodeMessageSection(metadata, bytes("payload"));
    const brokerPart = Buffer.alloc(6);
    brokerPart.writeUInt16BE(0x0e02, 0);
    brokerPart.writeUInt32BE(1_000_000, 2);
    const command = baseCommand.encode(message);
    const frame = decodeFrame(frameOf(command, Buffer.concat([brokerPart, section])));
    expect(frame.payload!.unreadable).toMatch(/broker entry metadata size 1000000/);
  });

  it("still reports a checksum mismatch as such, whatever its metadata", () => {
    const section = Uint8Array.of(0, 0, 0, 3, 0xff, 0xff, 0xff, 1, 2, 3);
    const frame = Buffer.from(messageFrame(section));
    frame[frame.length - 1] = 0;
    const decoded = decodeFrame(frame);
    expect(decoded.payload).toMatchObject({ checksumValid: false });
    expect(decoded.payload!.unreadable).toBeUndefined();
  });
});

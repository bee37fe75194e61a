// A frame whose declared size is over the reader's limit (issue 40). A MESSAGE's command is read
// from the frame's first bytes, the rest skipped as it arrives (nothing buffered for the declared
// size), and the frame comes out marked `oversized`, so its entry is undecodable and the frames
// after it still decode; any other command over the limit, or a command that cannot be read from
// the first bytes, is a FrameError. Fed whole or in pieces of any sizes, the verdict is the same.
// Before: every frame over the limit was a FrameError, so the connection dropped, and the broker
// sent the same entry again after the reconnect.
import { bytes } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { baseCommand } from "../src/wire/commands/codec.js";
import { CommandType } from "../src/wire/commands/enums.js";
import type { BaseCommand } from "../src/wire/commands/shapes.js";
import {
  BROKER_FRAME_HEADROOM,
  encodeCommandFrame,
  encodeMessageSection,
  encodePayloadFrame,
  type Frame,
  FrameError,
  FrameReader,
} from "../src/wire/frame.js";

const LIMIT = 1024;

const message = (entryId: bigint): BaseCommand => ({
  type: CommandType.MESSAGE,
  message: { consumerId: 3, messageId: { ledgerId: 7n, entryId } },
});

function messageFrame(entryId: bigint, payload: Uint8Array, batch?: number): Uint8Array {
  const section = encodeMessageSection(
    {
      producerName: "p",
      sequenceId: entryId,
      publishTime: 1,
      properties: [{ key: "k", value: "v" }],
      ...(batch === undefined ? {} : { numMessagesInBatch: batch }),
    },
    payload,
  );
  return encodePayloadFrame(message(entryId), section);
}

const ping = encodeCommandFrame({ type: CommandType.PING, ping: {} });
const pong = encodeCommandFrame({ type: CommandType.PONG, pong: {} });

/** What a frame came out as, comparable across readings. */
function summary(frame: Frame): unknown {
  const payload = frame.payload;
  return {
    command: frame.command,
    payload: payload && Buffer.from(payload.payload).toString("hex"),
    oversized: payload?.oversized,
    metadata: payload?.metadata,
  };
}

/** A deterministic generator, so a failing split can be reproduced from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/** Reads `stream` in pieces of random sizes (1 byte to 3 KiB); the frames, then what it threw. */
function inPieces(stream: Uint8Array, seed: number): { frames: unknown[]; error?: string } {
  const next = random(seed);
  const reader = new FrameReader(LIMIT);
  const frames: unknown[] = [];
  for (let at = 0; at < stream.length; ) {
    const size = 1 + Math.floor(next() * 3 * 1024);
    try {
      frames.push(...reader.push(stream.subarray(at, at + size)).map(summary));
    } catch (error) {
      return { frames, error: (error as Error).message };
    }
    at += size;
  }
  return { frames };
}

function whole(stream: Uint8Array): { frames: unknown[]; error?: string } {
  try {
    return { frames: new FrameReader(LIMIT).push(stream).map(summary) };
  } catch (error) {
    return { frames: [], error: (error as Error).message };
  }
}

describe("a MESSAGE frame over the limit", () => {
  const big = messageFrame(2n, new Uint8Array(64 * 1024).fill(0xab), 3);
  const after = messageFrame(3n, bytes("after"));
  const stream = Buffer.concat([ping, messageFrame(1n, bytes("before")), big, after, pong]);

  it("comes out with its command and metadata, its payload skipped, and the frames after it decode", () => {
    const frames = new FrameReader(LIMIT).push(stream);
    expect(frames.map((f) => f.command.type)).toEqual([
      CommandType.PING,
      CommandType.MESSAGE,
      CommandType.MESSAGE,
      CommandType.MESSAGE,
      CommandType.PONG,
    ]);
    const skipped = frames[2]!;
    expect(skipped.command).toEqual(message(2n));
    expect(skipped.payload).toMatchObject({
      oversized: `a frame of ${big.length - 4} bytes exceeds the limit of ${LIMIT}: its payload was skipped unread`,
      metadata: { sequenceId: 2n, numMessagesInBatch: 3, properties: [{ key: "k", value: "v" }] },
    });
    expect(skipped.payload!.payload).toHaveLength(0);
    expect(Buffer.from(frames[3]!.payload!.payload).toString()).toBe("after");
    expect(frames[3]!.payload!.oversized).toBeUndefined();
  });

  it("gives the same frames fed in pieces of random sizes as fed whole", () => {
    const expected = whole(stream);
    expect(expected.error).toBeUndefined();
    for (let seed = 1; seed <= 200; seed++)
      expect(inPieces(stream, seed), `seed ${seed}`).toEqual(expected);
  });

  it("comes out as soon as its first bytes are in, and the rest is dropped as it arrives", () => {
    const reader = new FrameReader(LIMIT);
    // A frame declaring 4 GiB - 1: nothing can be allocated for it, and nothing needs to be.
    const head = Buffer.from(messageFrame(9n, new Uint8Array(BROKER_FRAME_HEADROOM)));
    head.writeUInt32BE(0xffff_ffff, 0);
    const first = head.subarray(0, BROKER_FRAME_HEADROOM);
    const frames = reader.push(first);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.payload!.oversized).toMatch(/^a frame of 4294967295 bytes exceeds the limit/);
    // The rest of the declared size, in 1 MiB pieces of one buffer: each is dropped at once.
    const piece = new Uint8Array(1024 * 1024);
    let rest = 4 + 0xffff_ffff - first.length;
    while (rest > piece.length) {
      expect(reader.push(piece)).toEqual([]);
      rest -= piece.length;
    }
    // The frame's last bytes and the next frame, in one piece.
    const next = reader.push(Buffer.concat([piece.subarray(0, rest), ping]));
    expect(next.map((f) => f.command.type)).toEqual([CommandType.PING]);
  });
});

describe("a frame over the limit that is no MESSAGE", () => {
  it("is a FrameError naming its command, which it carries", () => {
    // A SUCCESS padded past the limit: a frame the broker never sends, but one a peer could.
    const command = baseCommand.encode({ type: CommandType.SUCCESS, success: { requestId: 5 } });
    const frame = Buffer.alloc(8 + command.length + 4 * LIMIT);
    frame.writeUInt32BE(frame.length - 4, 0);
    frame.writeUInt32BE(command.length, 4);
    frame.set(command, 8);
    let thrown: unknown;
    try {
      new FrameReader(LIMIT).push(Buffer.concat([ping, frame]));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FrameError);
    expect(thrown).toMatchObject({
      message: `a frame of ${frame.length - 4} bytes exceeds the limit of ${LIMIT}: a SUCCESS command, which is no entry to skip`,
      command: { type: CommandType.SUCCESS, success: { requestId: 5 } },
    });
    for (let seed = 1; seed <= 50; seed++)
      expect(inPieces(Buffer.concat([ping, frame]), seed)).toEqual({
        frames: [summary(new FrameReader().push(ping)[0]!)],
        error: (thrown as Error).message,
      });
  });

  it("is a FrameError, the stream lost, when its command is not within its first bytes", () => {
    const frame = Buffer.alloc(8 + 2 * BROKER_FRAME_HEADROOM);
    frame.writeUInt32BE(frame.length - 4, 0);
    frame.writeUInt32BE(BROKER_FRAME_HEADROOM, 4);
    const expected = `a frame of ${frame.length - 4} bytes exceeds the limit of ${LIMIT}, and its command of ${BROKER_FRAME_HEADROOM} bytes is not within its first ${BROKER_FRAME_HEADROOM}: the stream is lost`;
    expect(() => new FrameReader(LIMIT).push(frame)).toThrow(expected);
    for (let seed = 1; seed <= 50; seed++)
      expect(inPieces(frame, seed)).toEqual({ frames: [], error: expected });
  });

  it("is a FrameError when its command cannot be read", () => {
    const frame = Buffer.alloc(8 + 2 * LIMIT);
    frame.writeUInt32BE(frame.length - 4, 0);
    frame.writeUInt32BE(2, 4);
    frame.set([0x08, 0xff], 8);
    expect(() => new FrameReader(LIMIT).push(frame)).toThrow(FrameError);
    expect(() => new FrameReader(LIMIT).push(frame)).toThrow(/unreadable command/);
  });
});

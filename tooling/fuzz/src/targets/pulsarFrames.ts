// pulsar-frames: the frame reader on a byte stream, whole and in pieces. Frames of any kind a broker
// sends, one after another, mutated: totals, command sizes, checksums and payload sections damaged.
// A frame over the limit is read by its first bytes and the rest skipped as it arrives: whole and
// in pieces, the same frame comes out marked oversized (a MESSAGE), or the same error ends the read.
import fc from "fast-check";
import { CommandType } from "../../../../packages/pulsar/src/wire/commands/enums.js";
import {
  BROKER_FRAME_HEADROOM,
  encodeCommandFrame,
  encodeMessageSection,
  encodePayloadFrame,
  type Frame,
  FrameReader,
} from "../../../../packages/pulsar/src/wire/frame.js";
import { type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import {
  commandFrames,
  describeInput,
  FUZZ_MAX_MESSAGE_SIZE,
  messageFrames,
  ownError,
  refusedByLimit,
  unchanged,
  untouched,
  valid,
} from "./pulsarSeeds.js";

/** What the reader gave: the frames (their command types and payload bytes), then what it threw. */
interface Read {
  readonly frames: string[];
  readonly error?: string;
}

const summary = (frame: Frame): string =>
  `${frame.command.type}:${frame.payload ? Buffer.from(frame.payload.payload).toString("hex") : "-"}:${frame.payload?.unreadable ?? ""}:${frame.payload?.oversized ?? ""}`;

function read(bytes: Uint8Array, pieces: readonly number[]): Read {
  const reader = new FrameReader(FUZZ_MAX_MESSAGE_SIZE);
  const frames: string[] = [];
  let at = 0;
  for (const size of pieces) {
    const piece = bytes.subarray(at, at + size);
    at += size;
    try {
      frames.push(...reader.push(piece).map(summary));
    } catch (error) {
      return { frames, error: (error as Error).message };
    }
  }
  return { frames };
}

/** Piece sizes the bytes decide (1 to 64), so a finding reproduces from its bytes alone. */
function piecesOf(bytes: Uint8Array): number[] {
  const sizes: number[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = 1 + ((bytes[i % bytes.length]! * 31 + i) % 64);
    sizes.push(size);
    at += size;
  }
  return sizes;
}

/** Frames with their total size in front, as the stream carries them. */
function stream(frames: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(
    frames.map((frame) => {
      const total = Buffer.alloc(4);
      total.writeUInt32BE(frame.length, 0);
      return Buffer.concat([total, frame]);
    }),
  );
}

/** Three frames each: a command, a MESSAGE (every codec, single and batched), another command. */
function streams(): Uint8Array[] {
  const commands = commandFrames();
  return messageFrames().map((message, i) =>
    stream([commands[i % commands.length]!, message, commands[(i + 7) % commands.length]!]),
  );
}

/** A MESSAGE frame one byte over the limit, then a PING: the PING must still be read. */
function messageOverTheLimit(): Uint8Array {
  const message = encodePayloadFrame(
    {
      type: CommandType.MESSAGE,
      message: { consumerId: 1, messageId: { ledgerId: 1n, entryId: 2n } },
    },
    encodeMessageSection({ producerName: "p", sequenceId: 0n, publishTime: 1 }, new Uint8Array(0)),
  );
  const padded = Buffer.alloc(4 + FUZZ_MAX_MESSAGE_SIZE + 1);
  padded.set(message);
  padded.writeUInt32BE(FUZZ_MAX_MESSAGE_SIZE + 1, 0);
  return Buffer.concat([padded, encodeCommandFrame({ type: CommandType.PING, ping: {} })]);
}

/** The first bytes of a SUCCESS frame declaring 4 GiB - 1: the error comes once they are in. */
function answerOverTheLimit(): Uint8Array {
  const head = Buffer.alloc(BROKER_FRAME_HEADROOM);
  head.set(encodeCommandFrame({ type: CommandType.SUCCESS, success: { requestId: 1 } }));
  head.writeUInt32BE(0xffff_ffff, 0);
  return head;
}

export const pulsarFrames = fuzzTarget<Mutated>({
  name: "pulsar-frames",
  decoder: "FrameReader and decodeFrame, whole and in pieces (@ruststream/pulsar/wire)",
  inputs: mutated(fc.constantFrom(...valid(streams()))),
  corpus: () => [
    {
      name: "a total size of 4 GiB - 1",
      input: unchanged(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1)),
    },
    {
      name: "a command size past the frame",
      input: unchanged(Uint8Array.of(0, 0, 0, 6, 0x7f, 0xff, 0xff, 0xff, 8, 18)),
    },
    {
      name: "damaged command bytes (protobufjs's RangeError before)",
      input: unchanged(Uint8Array.of(0, 0, 0, 6, 0, 0, 0, 2, 0x08, 0xff)),
    },
    {
      name: "a command type no protocol has",
      input: unchanged(Uint8Array.of(0, 0, 0, 6, 0, 0, 0, 2, 0x08, 99)),
    },
    {
      name: "a MESSAGE without its body",
      input: unchanged(Uint8Array.of(0, 0, 0, 6, 0, 0, 0, 2, 0x08, 9)),
    },
    {
      name: "a MESSAGE over the limit, then a PING (a lost stream before: the entry came again after every reconnect)",
      input: unchanged(messageOverTheLimit()),
    },
    {
      name: "a SUCCESS declaring 4 GiB - 1",
      input: unchanged(answerOverTheLimit()),
    },
  ],
  size: (input) => input.bytes.length,
  // Whole: one push, which throws what the reader throws (the suite classifies it).
  decode: (input): Read => ({
    frames: new FrameReader(FUZZ_MAX_MESSAGE_SIZE).push(input.bytes).map(summary),
  }),
  ownError,
  byLimit: refusedByLimit,
  check(input, { threw, value }) {
    const whole: Read = threw ? { frames: [], error: (value as Error).message } : (value as Read);
    const inPieces = read(input.bytes, piecesOf(input.bytes));
    // In pieces, frames complete before the damage come out before the error; whole, the push
    // throws. Either way the same frames were readable, and the same error ends them.
    if (whole.error !== inPieces.error)
      return `whole: ${whole.error ?? "no error"}; in pieces: ${inPieces.error ?? "no error"}`;
    if (whole.error === undefined && whole.frames.join() !== inPieces.frames.join())
      return "whole and in pieces gave different frames";
    if (untouched(input) && (whole.error !== undefined || whole.frames.length !== 3))
      return `a valid stream of 3 frames read as ${whole.frames.length}, ${whole.error ?? ""}`;
    return undefined;
  },
  memoryBound: (input) => 3 * input.bytes.length + FUZZ_MAX_MESSAGE_SIZE,
  describe: describeInput,
});

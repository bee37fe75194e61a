import {
  type DecodedFile,
  type DecodedMessage,
  type DecodeOutcome,
  decodeFile,
  FileEncoder,
  fileErrorDetail,
  HEADER_SIZE,
  StreamDecoder,
} from "@ruststream/file/format";
import fc from "fast-check";
import { hex, type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import { intactBefore, messagesDiffer, streamFile } from "./streamFiles.js";

// Stream-file frames: the whole-buffer decoder and the incremental one fed the same bytes in
// pieces, on mutated files; they must agree, and lose nothing that came before the damage.

interface Input {
  readonly file: Mutated;
  /** Sizes of the pieces the incremental decoder is fed, in turn. */
  readonly pieces: readonly number[];
  /** The decoders' maxMessageBytes: 64 KiB, or undefined for the format's own 4 GiB - 1. */
  readonly limit: number | undefined;
}

interface Decoded {
  readonly whole: DecodedFile;
  readonly pieces: { readonly messages: DecodedMessage[]; readonly outcome: DecodeOutcome };
}

function inPieces(input: Input): Decoded["pieces"] {
  const decoder = new StreamDecoder(
    input.limit === undefined ? {} : { maxMessageBytes: input.limit },
  );
  const messages: DecodedMessage[] = [];
  const bytes = input.file.bytes;
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = input.pieces[i % input.pieces.length]!;
    for (const item of decoder.push(bytes.subarray(at, at + size))) {
      if (item.kind === "message") messages.push(item.message);
    }
    at += size;
  }
  return { messages, outcome: decoder.finish() };
}

function verdict(outcome: DecodeOutcome): string {
  if (outcome.status !== "damaged") return `${outcome.status} at ${outcome.end}`;
  const detail = fileErrorDetail(outcome.error);
  return `damaged at ${outcome.end}: ${detail?.code} at ${detail?.offset}`;
}

/** A file whose one frame claims nearly 4 GiB and holds 10 bytes, split by a beacon. */
function claimingFile(claim: number): Uint8Array {
  const { encoder, bytes } = FileEncoder.create({
    fileName: "c.ss",
    createdAt: 1,
    beaconInterval: 128,
  });
  const frame = encoder.write({
    streamKey: "k",
    shard: 0n,
    seq: 1n,
    timestamp: 2,
    payload: new Uint8Array(200),
  });
  new DataView(frame.buffer, frame.byteOffset).setUint32(1 + 1 + 24, claim);
  return new Uint8Array(Buffer.concat([bytes, frame]));
}

function unchanged(bytes: Uint8Array): Mutated {
  return { seed: bytes, bytes, firstChange: bytes.length };
}

export const fileFrames = fuzzTarget<Input>({
  name: "file-frames",
  decoder: "decodeFile, and StreamDecoder fed the same bytes in pieces (@ruststream/file)",
  inputs: fc.record({
    file: mutated(streamFile),
    pieces: fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 6 }),
    limit: fc.constantFrom(64 * 1024, undefined),
  }),
  corpus: () => [
    {
      name: "a frame claiming 4 GiB - 16 bytes, read with the format's limit",
      input: { file: unchanged(claimingFile(0xffff_fff0)), pieces: [7], limit: undefined },
    },
    {
      name: "a frame claiming 200,000 bytes across beacons, in small pieces",
      input: { file: unchanged(claimingFile(200_000)), pieces: [3, 50], limit: 64 * 1024 },
    },
  ],
  size: (input) => input.file.bytes.length,
  decode(input): Decoded {
    const options = input.limit === undefined ? {} : { maxMessageBytes: input.limit };
    return { whole: decodeFile(input.file.bytes, options), pieces: inPieces(input) };
  },
  // Damage is never thrown: it is in the outcome.
  ownError: () => false,
  byLimit: ({ value }) => {
    const outcome = (value as Decoded).whole.outcome;
    return (
      outcome.status === "damaged" && fileErrorDetail(outcome.error)?.code === "FRAME_TOO_LARGE"
    );
  },
  refused: (value) => (value as Decoded).whole.outcome.status === "damaged",
  check(input, { value }) {
    const { whole, pieces } = value as Decoded;
    if (verdict(whole.outcome) !== verdict(pieces.outcome)) {
      return `whole: ${verdict(whole.outcome)}; in pieces: ${verdict(pieces.outcome)}`;
    }
    const differ = messagesDiffer(whole.messages, pieces.messages);
    if (differ !== undefined) return `whole and in pieces: ${differ}`;
    if (input.file.firstChange < HEADER_SIZE) return undefined;
    const intact = intactBefore(input.file.seed, input.file.firstChange);
    if (intact === undefined) return undefined;
    const lost = messagesDiffer(intact, whole.messages.slice(0, intact.length));
    return lost === undefined ? undefined : `a message before the damage was lost: ${lost}`;
  },
  memoryBound: (input) => 8 * input.file.bytes.length,
  describe: (input) =>
    `limit ${input.limit ?? "4 GiB - 1"}, pieces ${input.pieces.join(",")}, first change at ${input.file.firstChange}: ${hex(input.file.bytes)}`,
});

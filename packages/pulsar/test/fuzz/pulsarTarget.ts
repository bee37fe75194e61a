// The Pulsar decoders' targets for the project's fuzz suite (tooling/fuzz): each file here is one
// target in the suite's shape, all but its input generator, so that wiring one in is
// `fuzzTarget({ ...target, inputs: mutated(fc.constantFrom(...target.seeds())) })`. The inputs
// are the suite's `Mutated` (a valid encoding, the bytes mutations made of it, and where the first
// change is), field for field.
import { isRustStreamError } from "@ruststream/core";
import { DecodeError } from "../../src/wire/errors.js";

export interface FuzzInput {
  readonly seed: Uint8Array;
  readonly bytes: Uint8Array;
  /** Every byte before this offset is the seed's (`bytes.length` when nothing changed). */
  readonly firstChange: number;
}

/** What a decode ended with: the value it returned, or what it threw. */
export interface FuzzResult {
  readonly threw: boolean;
  readonly value: unknown;
}

export interface PulsarFuzzTarget {
  /** The report's row, `--target`'s value. */
  readonly name: string;
  readonly decoder: string;
  /** Valid encodings, to be mutated. */
  seeds(): readonly Uint8Array[];
  /** Hostile inputs known by name: each once stopped, crashed or bloated a decoder. */
  corpus(): readonly { readonly name: string; readonly input: FuzzInput }[];
  size(input: FuzzInput): number;
  decode(input: FuzzInput): unknown;
  /** The package's own errors: DecodeError (FrameError among them), and nothing else. */
  ownError(error: unknown): boolean;
  /** A refusal by a configured limit: the max message size, or the frame reader's. */
  byLimit(result: FuzzResult): boolean;
  /** A returned value that stands for a typed refusal (an entry found undecodable). */
  refused?(value: unknown): boolean;
  /** The target's own properties: what broke, or undefined. */
  check(input: FuzzInput, result: FuzzResult): string | undefined;
  /** Bytes a decode may hold beyond the input: its configured limits. */
  memoryBound(input: FuzzInput): number;
  describe(input: FuzzInput): string;
}

/** The limit the targets decode with: small, so that mutated sizes reach it often. */
export const FUZZ_MAX_MESSAGE_SIZE = 1024 * 1024;

/** A corpus input: bytes as they are, as a plain Uint8Array (see `valid`). */
export const unchanged = (bytes: Uint8Array): FuzzInput => {
  const copy = Uint8Array.from(bytes);
  return { seed: copy, bytes: copy, firstChange: copy.length };
};

/** The seeds targets made from valid encodings (not a corpus's hostile inputs). */
const validSeeds = new WeakSet<Uint8Array>();

/**
 * Valid encodings as seeds, marked so that each, unmutated, must decode. Each is copied into a
 * plain Uint8Array: the encoders give Buffers, whose slice() shares their memory, so a mutation
 * made through it would change the seed itself.
 */
export function valid(seeds: readonly Uint8Array[]): readonly Uint8Array[] {
  return seeds.map((seed) => {
    const copy = Uint8Array.from(seed);
    validSeeds.add(copy);
    return copy;
  });
}

/** True when the input is a valid seed, unmutated. */
export const untouched = (input: FuzzInput): boolean =>
  validSeeds.has(input.seed) &&
  input.firstChange === input.bytes.length &&
  input.bytes.length === input.seed.length;

export const ownError = (error: unknown): boolean =>
  error instanceof DecodeError && isRustStreamError(error, "invalid-argument");

/** Whether a thrown error is a refusal by a size limit. */
export const refusedByLimit = ({ threw, value }: FuzzResult): boolean =>
  threw && /above the max message size|exceeds the limit/.test((value as Error).message);

/** Hex of the first `max` bytes, for a finding's report. */
export function hex(bytes: Uint8Array, max = 512): string {
  const shown = Buffer.from(bytes.subarray(0, max)).toString("hex");
  return bytes.length > max ? `${shown}... (${bytes.length} bytes)` : shown;
}

export const describeInput = (input: FuzzInput): string =>
  `first change at ${input.firstChange}: ${hex(input.bytes)}`;

/** A big-endian u32 (or i32) in front of `rest`: how a target's input carries a count or a size. */
export function withU32(value: number, rest: Uint8Array): Uint8Array {
  const out = Buffer.alloc(4 + rest.length);
  out.writeUInt32BE(value >>> 0, 0);
  out.set(rest, 4);
  return out;
}

import { type Codec, isRustStreamError } from "@ruststream/core";
import fc, { type Arbitrary } from "fast-check";
import { hex, type Mutated, mutated } from "../mutate.js";
import { type FuzzTarget, fuzzTarget } from "../target.js";

// What the codec targets share: valid encodings of generated values, and structures built to be
// costly (deep nesting, a length no payload holds), each then mutated; one set of checks.

/** `depth` copies of `head` (an array of one), then `last`: deep nesting in any binary codec. */
export function nestedBytes(head: number, depth: number, last: number[]): Uint8Array {
  const bytes = new Uint8Array(depth + last.length).fill(head);
  bytes.set(last, depth);
  return bytes;
}

/** Seeds a codec's own `encode` wrote: those must read back to the bytes they came from. */
const canonical = new WeakSet<Uint8Array>();

/** The codec's encoding of each value, marked as one that must read back exactly. */
export function encodings(
  values: Arbitrary<unknown>,
  codec: Codec<unknown>,
): Arbitrary<Uint8Array> {
  return values.map((value) => {
    const bytes = codec.encode(value);
    canonical.add(bytes);
    return bytes;
  });
}

/** Dates whose milliseconds survive cbor-x's seconds as a float (years 0 to 9999). */
export const dates = fc.date({
  min: new Date("0000-01-01T00:00:00.000Z"),
  max: new Date("9999-12-31T23:59:59.999Z"),
  noInvalidDate: true,
});

/** A map key `__proto__`: the MessagePack library refuses it, and the CBOR codec (cbor-x renames it). */
export const protoKeyRefusal = (error: Error): boolean => /__proto__/.test(error.message);

/** Depths around and far past the codecs' limits. */
export const depths = fc.oneof(
  fc.integer({ min: 1, max: 600 }),
  fc.integer({ min: 9_990, max: 20_000 }),
);

interface CodecTarget {
  readonly name: string;
  readonly decoder: string;
  readonly codec: Codec<unknown>;
  /** Valid encodings, and hostile structures. */
  readonly seeds: Arbitrary<Uint8Array>;
  corpus(): readonly { readonly name: string; readonly input: Uint8Array }[];
  /** A valid encoding the codec refuses by design (a map key `__proto__`), by its error. */
  readonly refusesValid?: (error: Error) => boolean;
}

function unchanged(bytes: Uint8Array): Mutated {
  return { seed: bytes, bytes, firstChange: bytes.length };
}

/**
 * A codec's target: no error but core's, a refusal by a limit named as one, and a valid encoding
 * (unmutated, and decodable) read back to a value that encodes to the same bytes.
 */
export function codecTarget(spec: CodecTarget): FuzzTarget {
  return fuzzTarget<Mutated>({
    name: spec.name,
    decoder: spec.decoder,
    inputs: mutated(spec.seeds),
    corpus: () => spec.corpus().map(({ name, input }) => ({ name, input: unchanged(input) })),
    size: (input) => input.bytes.length,
    decode: (input) => spec.codec.decode(input.bytes),
    ownError: (error) => isRustStreamError(error, "invalid-argument"),
    byLimit: ({ threw, value }) =>
      threw && /refused by the .* codec's limits/.test((value as Error).message),
    check(input, { threw, value }) {
      const untouched =
        input.firstChange === input.bytes.length && input.bytes.length === input.seed.length;
      if (!untouched || !canonical.has(input.seed)) return undefined;
      if (threw) {
        return spec.refusesValid?.(value as Error)
          ? undefined
          : `a valid encoding was refused: ${(value as Error).message}`;
      }
      const again = spec.codec.encode(value);
      return Buffer.compare(again, input.bytes) === 0
        ? undefined
        : "decoded and encoded again, the bytes differ";
    },
    memoryBound: (input) => 64 * input.bytes.length + 1024 * 1024,
    describe: (input) => `first change at ${input.firstChange}: ${hex(input.bytes)}`,
  });
}

import fc, { type Arbitrary } from "fast-check";

/** A valid encoding and what a few mutations made of it. */
export interface Mutated {
  readonly seed: Uint8Array;
  readonly bytes: Uint8Array;
  /** Every byte before this offset is the seed's (`bytes.length` when nothing changed). */
  readonly firstChange: number;
}

/** Where a mutation lands, as a fraction of the length (in 1/65536), so it fits any input. */
const place = fc.integer({ min: 0, max: 0xffff });

/** Values a length field or a count takes when damaged, and those that sit on its edges. */
const interestingU32 = fc.oneof(
  fc.constantFrom(
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x100,
    0xffff,
    0x10000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fff0,
    0xffff_ffff,
  ),
  fc.nat({ max: 0xffff_ffff }),
  fc.nat({ max: 4096 }),
);

const interestingByte = fc.oneof(fc.constantFrom(0, 1, 0x7f, 0x80, 0xff), fc.nat({ max: 255 }));

type Mutation =
  | { readonly kind: "flip"; readonly at: number; readonly bit: number }
  | { readonly kind: "set"; readonly at: number; readonly value: number }
  | { readonly kind: "u32"; readonly at: number; readonly value: number }
  | { readonly kind: "cut"; readonly at: number }
  | { readonly kind: "insert"; readonly at: number; readonly bytes: Uint8Array }
  | { readonly kind: "delete"; readonly at: number; readonly length: number }
  | { readonly kind: "repeat"; readonly at: number; readonly length: number };

const mutation: Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("flip"), at: place, bit: fc.nat(7) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("set"), at: place, value: interestingByte }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("u32"), at: place, value: interestingU32 }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cut"), at: place }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("insert"),
      at: place,
      bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("delete"),
      at: place,
      length: fc.integer({ min: 1, max: 64 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("repeat"),
      at: place,
      length: fc.integer({ min: 1, max: 256 }),
    }),
  },
);

/**
 * A copy that never shares memory with `bytes`: a seed may be a Node Buffer, whose `slice()` is a
 * view, so a mutation through it would change the seed itself for every later input.
 */
function copyOf(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

function apply(bytes: Uint8Array, m: Mutation): { bytes: Uint8Array; at: number } {
  const at = Math.floor((m.at / 0x10000) * bytes.length);
  switch (m.kind) {
    case "flip": {
      if (bytes.length === 0) return { bytes, at: 0 };
      const out = copyOf(bytes);
      out[at] = out[at]! ^ (1 << m.bit);
      return { bytes: out, at };
    }
    case "set": {
      if (bytes.length === 0) return { bytes, at: 0 };
      const out = copyOf(bytes);
      out[at] = m.value;
      return { bytes: out, at };
    }
    case "u32": {
      const out = copyOf(bytes);
      const from = Math.max(0, Math.min(at, bytes.length - 4));
      for (let i = 0; i < 4 && from + i < out.length; i++)
        out[from + i] = (m.value >>> (24 - 8 * i)) & 0xff;
      return { bytes: out, at: from };
    }
    case "cut":
      return { bytes: bytes.subarray(0, at), at };
    case "insert":
      return { bytes: concat(bytes.subarray(0, at), m.bytes, bytes.subarray(at)), at };
    case "delete":
      return { bytes: concat(bytes.subarray(0, at), bytes.subarray(at + m.length)), at };
    case "repeat": {
      const slice = bytes.subarray(at, at + m.length);
      return {
        bytes: concat(
          bytes.subarray(0, at + slice.length),
          slice,
          bytes.subarray(at + slice.length),
        ),
        at: at + slice.length,
      };
    }
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Seeds with up to `maxMutations` mutations each (none a fifth of the time, so valid encodings
 * are decoded too): bits flipped, bytes and 32-bit fields set to edge values, the end cut, bytes
 * inserted, deleted or repeated.
 */
export function mutated(seeds: Arbitrary<Uint8Array>, maxMutations = 3): Arbitrary<Mutated> {
  const mutations = fc.oneof(
    { weight: 1, arbitrary: fc.constant<Mutation[]>([]) },
    { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: maxMutations }) },
  );
  return fc.tuple(seeds, mutations).map(([seed, list]) => {
    let bytes = seed;
    let firstChange = seed.length;
    for (const m of list) {
      const applied = apply(bytes, m);
      bytes = applied.bytes;
      firstChange = Math.min(firstChange, applied.at);
    }
    return { seed, bytes, firstChange: Math.min(firstChange, bytes.length) };
  });
}

/** Hex of the first `max` bytes, for a finding's report. */
export function hex(bytes: Uint8Array, max = 512): string {
  const shown = Buffer.from(bytes.subarray(0, max)).toString("hex");
  return bytes.length > max ? `${shown}... (${bytes.length} bytes)` : shown;
}

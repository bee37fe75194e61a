import { HeaderMap } from "@ruststream/core";
import fc, { type Arbitrary } from "fast-check";

// Header maps as the envelopes and frames carry them: text values and binary ones, names in any
// case, a few or none.

const name = fc.oneof(
  fc.constantFrom(
    "content-type",
    "X-Trace",
    "traceparent",
    "x-ruststream-retry-count",
    "é",
    " padded ",
  ),
  fc.string({ minLength: 1, maxLength: 12 }),
);

const value = fc.oneof(
  fc.string({ maxLength: 40 }).map((text) => new TextEncoder().encode(text)),
  fc.uint8Array({ maxLength: 40 }),
);

export const headerMaps: Arbitrary<HeaderMap> = fc
  .array(fc.tuple(name, value), { maxLength: 6 })
  .map((pairs) => {
    const headers = new HeaderMap();
    for (const [n, v] of pairs) headers.set(n, v);
    return headers;
  });

/** Payloads, some starting like an envelope or a frame would. */
export const payloads: Arbitrary<Uint8Array> = fc.oneof(
  { weight: 4, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(new TextEncoder().encode("rs1:abc"), new Uint8Array([0, 0, 0, 0])),
  },
);

/** `count` headers with distinct names: a message a peer may send, costly if decoding scans per header. */
export function manyNames(count: number): [string, Uint8Array][] {
  return Array.from({ length: count }, (_, i) => [`h${i}`, new Uint8Array([i & 0xff])]);
}

/**
 * What a decoded header map may hold per byte of what it was read from: each header is a name
 * string, a value view and a place in the map's index, tens of bytes of objects, so a message of
 * many one-byte headers takes about 20 times its size (100,000 headers: 2 MB read, 41 MB held).
 */
export const HEADER_MAP_BYTES_PER_BYTE = 32;

// rabbitmq-content-header: a message's properties as bytes, the part of a content header frame a
// publisher writes and the server passes on, read as a consumer of the package reads them: the
// frame guard first (packages/rabbitmq/src/client/contentHeader.ts), then amqplib's own frame
// decoder, then the delivery's headers. amqplib's decoder recurses per nested table and throws on
// what it cannot read, and a throw there fails the connection (the server then delivers the same
// message again), so here nothing may throw at all.
import fc from "fast-check";
import { headersOf } from "../../../../packages/rabbitmq/src/amqpHeaders.js";
import { guardFirstFrame } from "../../../../packages/rabbitmq/src/client/contentHeader.js";
import type { LinkProperties } from "../../../../packages/rabbitmq/src/link.js";
import { unreadableHeaders } from "../../../../packages/rabbitmq/src/names.js";
import {
  deepHeaderFrame,
  frameOfProperties,
  headerFrame,
  propertiesOfFrame,
  readFrame,
} from "../../../../packages/rabbitmq/test/hostileFrames.js";
import { type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import { describeInput, unchanged } from "./pulsarSeeds.js";

/** A table entry's name: amqplib's encoder reads a table with an entry "!" as a typed value. */
const name = fc.string({ maxLength: 8 }).filter((n) => n !== "!" && n !== "__proto__");

/** Property sets amqplib writes: every property, header tables of each value type, nesting. */
const seedFields = fc.record(
  {
    contentType: fc.string({ maxLength: 12 }),
    contentEncoding: fc.string({ maxLength: 6 }),
    headers: fc.dictionary(
      name,
      fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.integer(),
        // amqplib writes an integral number as a 64-bit integer: keep them within one.
        fc.double({ noNaN: true, min: -1e12, max: 1e12 }),
        fc.boolean(),
        fc.constant(null),
        fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)),
        fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
        fc.dictionary(name, fc.integer(), { maxKeys: 3 }),
      ),
      { maxKeys: 4 },
    ),
    deliveryMode: fc.constantFrom(1, 2),
    priority: fc.nat(9),
    correlationId: fc.string({ maxLength: 8 }),
    replyTo: fc.string({ maxLength: 8 }),
    expiration: fc.nat().map(String),
    messageId: fc.string({ maxLength: 8 }),
    timestamp: fc.nat(),
    type: fc.string({ maxLength: 6 }),
    userId: fc.string({ maxLength: 6 }),
    appId: fc.string({ maxLength: 6 }),
  },
  { requiredKeys: [] },
);

const seeds = fc.oneof(
  { weight: 9, arbitrary: seedFields.map((fields) => propertiesOfFrame(headerFrame(fields))) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 60, max: 70 }).map((d) => propertiesOfFrame(deepHeaderFrame(d))),
  },
);

interface Read {
  readonly rewritten: boolean;
  readonly size: number;
  readonly marked: boolean;
  readonly unreadable: boolean;
}

export const rabbitmqContentHeader = fuzzTarget<Mutated>({
  name: "rabbitmq-content-header",
  decoder:
    "a content header frame's properties: the frame guard, amqplib's decoder, headersOf (@ruststream/rabbitmq)",
  inputs: mutated(seeds),
  corpus: () => [
    {
      name: "a header table nested 10,000 deep (amqplib's stack overflowed before)",
      input: unchanged(propertiesOfFrame(deepHeaderFrame(10_000))),
    },
    {
      name: "an array nested 10,000 deep",
      input: unchanged(propertiesOfFrame(deepHeaderFrame(10_000, { tag: "A" }))),
    },
    {
      name: "a value of an unknown type (amqplib threw a TypeError before)",
      input: unchanged(propertiesOfFrame(deepHeaderFrame(1, { tag: "Q" }))),
    },
  ],
  size: (input) => input.bytes.length,
  decode(input): Read {
    const frame = frameOfProperties(input.bytes);
    const guarded = guardFirstFrame(frame);
    const read = readFrame(guarded);
    const headers = (read.fields.headers ?? {}) as Record<string, unknown>;
    return {
      rewritten: guarded !== frame,
      size: read.size,
      marked: typeof headers[unreadableHeaders] === "string",
      unreadable:
        headersOf({ ...read.fields, headers } as unknown as LinkProperties).unreadable !==
        undefined,
    };
  },
  // Nothing may throw: a throw here is a throw in amqplib's reader, which fails the connection.
  ownError: () => false,
  byLimit: () => false,
  refused: (value) => (value as Read).unreadable,
  check(_input, { value }) {
    const read = value as Read;
    if (read.size !== 3) return `the body size read as ${read.size}, not the 3 sent`;
    if (read.rewritten && !read.marked) return "the guard rewrote the properties without its mark";
    if (read.marked && !read.unreadable) return "a marked delivery was not reported unreadable";
    return undefined;
  },
  memoryBound: (input) => 64 * input.bytes.length + 64 * 1024,
  describe: describeInput,
});

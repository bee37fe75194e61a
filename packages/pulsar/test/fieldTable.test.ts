import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import {
  baseCommand,
  brokerEntryMetadata,
  messageIdData,
  messageMetadata,
  singleMessageMetadata,
} from "../src/wire/commands/codec.js";
import { ENUMS } from "../src/wire/commands/enums.js";
import { type FieldSpec, MESSAGES } from "../src/wire/commands/fieldTable.js";

// The codec is built from the field table (src/wire/commands/fieldTable.ts), and the TypeScript
// shapes are derived from it (test/commandShapes.test-d.ts). Here the bytes: every field of every
// message, set at once, is written under the table's field number with the wire type its type
// has, and reads back as it was written (64-bit values as bigint or number as the table says).

const TABLE: Readonly<Record<string, Readonly<Record<string, FieldSpec>>>> = MESSAGES;
const ENUM_VALUES: Readonly<Record<string, Readonly<Record<string, number>>>> = ENUMS;

/** protobuf's wire types: varint for integers, bools and enums, length-delimited for the rest. */
const VARINT = 0;
const LENGTH_DELIMITED = 2;

function wireTypeOf(type: string): number {
  return type === "string" || type === "bytes" || type in TABLE ? LENGTH_DELIMITED : VARINT;
}

/** A value for one field, distinct per field number; 64-bit ones past 2^53 where they are bigint. */
function sampleOf(type: string, id: number, depth: number): unknown {
  switch (type) {
    case "string":
      return `field-${id}`;
    case "bytes":
      return new Uint8Array([id, 0, 255]);
    case "bool":
      return true;
    case "int32":
      return -id;
    case "uint32":
      return 1000 + id;
    case "int64":
      return -(2n ** 60n) - BigInt(id);
    case "uint64":
      return 2n ** 63n + BigInt(id);
    case "int64n":
    case "uint64n":
      return 2 ** 40 + id;
  }
  const values = ENUM_VALUES[type];
  if (values !== undefined) return Object.values(values).at(-1);
  return fullSample(type, depth + 1);
}

/**
 * A message with every field set: repeated ones twice. A message nested in itself
 * (MessageIdData.firstChunkMessageId) is set once, one level down.
 */
function fullSample(typeName: string, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(TABLE[typeName]!)) {
    if (spec.type === typeName && depth > 0) continue;
    const value = sampleOf(spec.type, spec.id, depth);
    out[name] = spec.rule === "repeated" ? [value, value] : value;
  }
  return out;
}

interface Tag {
  readonly field: number;
  readonly wireType: number;
}

/** The tags the bytes carry, in order, with each nested message's own tags checked recursively. */
function checkBytes(typeName: string, bytes: Uint8Array, sample: Record<string, unknown>): void {
  const fields = TABLE[typeName]!;
  const byNumber = new Map(Object.entries(fields).map(([name, spec]) => [spec.id, { name, spec }]));
  const reader = protobuf.Reader.create(bytes);
  const seen: Tag[] = [];
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wireType = tag & 7;
    seen.push({ field, wireType });
    const known = byNumber.get(field);
    expect(known, `${typeName}: field number ${field} is not in the table`).toBeDefined();
    if (known && known.spec.type in TABLE) {
      const nested = reader.bytes();
      const value = sample[known.name];
      const first = (Array.isArray(value) ? value[0] : value) as Record<string, unknown>;
      checkBytes(known.spec.type, nested, first);
    } else {
      reader.skipType(wireType);
    }
  }
  const expected: Tag[] = [];
  for (const [name, spec] of Object.entries(fields)) {
    if (!(name in sample)) continue;
    const times = spec.rule === "repeated" ? 2 : 1;
    for (let i = 0; i < times; i++)
      expected.push({ field: spec.id, wireType: wireTypeOf(spec.type) });
  }
  const order = (tags: Tag[]) => [...tags].sort((a, b) => a.field - b.field);
  expect(order(seen), typeName).toEqual(order(expected));
}

/** Bytes compared as bytes, whatever array class the decoder hands back. */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return { bytes: [...value] };
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/** Any codec, fed the samples (built from the table, so typed loosely). */
interface AnyCodec {
  encode(value: never): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

const codecs: [string, AnyCodec][] = [
  ["BaseCommand", baseCommand],
  ["MessageMetadata", messageMetadata],
  ["SingleMessageMetadata", singleMessageMetadata],
  ["BrokerEntryMetadata", brokerEntryMetadata],
  ["MessageIdData", messageIdData],
];

/** Every message type the codecs reach, through their fields. */
function reachable(): Set<string> {
  const found = new Set<string>();
  const visit = (typeName: string): void => {
    if (found.has(typeName)) return;
    found.add(typeName);
    for (const spec of Object.values(TABLE[typeName]!)) if (spec.type in TABLE) visit(spec.type);
  };
  for (const [name] of codecs) visit(name);
  return found;
}

describe("the field table on the wire", () => {
  it("reaches every message of the table through the five codecs", () => {
    expect([...reachable()].sort()).toEqual(Object.keys(TABLE).sort());
  });

  for (const [typeName, codec] of codecs) {
    it(`${typeName}: every field under its number and wire type, read back as written`, () => {
      const sample = fullSample(typeName);
      const bytes = codec.encode(sample as never);
      checkBytes(typeName, bytes, sample);
      expect(plain(codec.decode(bytes))).toEqual(plain(sample));
    });
  }
});

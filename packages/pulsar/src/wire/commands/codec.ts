// The glue between the field table and protobufjs: the table is declared to protobufjs (proto2, so
// a required or explicitly set zero is always encoded, and an absent optional field decodes as
// absent: the code reading it applies the protocol's default), and values cross between
// protobufjs's objects (64-bit values as Long) and the plain shapes (bigint or number). Decoding
// throws only DecodeError, whatever the bytes.
//
// Enums travel as int32 varints. protobufjs drops a proto2 enum value it does not know, so the field
// would read as absent (a compression type the client does not know, delivered as if uncompressed);
// they are declared to it as plain int32 instead, and checked here: a value this client does not
// know is a DecodeError, except in the enums the protocol keeps growing and the client reads as
// open (OPEN_ENUMS).
import protobuf from "protobufjs";
import { DecodeError } from "../errors.js";
import { ENUMS, type EnumName } from "./enums.js";
import { type FieldSpec, MESSAGES, type MessageName } from "./fieldTable.js";
import type {
  BaseCommand,
  BrokerEntryMetadata,
  MessageIdData,
  MessageMetadata,
  Shape,
  SingleMessageMetadata,
} from "./shapes.js";

// The table read as plain records, for the loops below (its literal types are for shapes.ts).
const TABLE: Readonly<Record<string, Readonly<Record<string, FieldSpec>>>> = MESSAGES;

// "uint64n"/"int64n" are 64-bit on the wire and numbers in JavaScript.
const WIRE_TYPE: Record<string, string> = { uint64n: "uint64", int64n: "int64" };

// protobufjs reads a JSON descriptor without an edition as proto3, where an optional field holding
// zero or false is not written at all: partition 0, batch index 0 and durable=false would vanish.
// Every type, enum and field here is marked proto2, so explicit presence holds.
const EDITION = { edition: "proto2" } as const;

/**
 * The enums whose unknown values decode as numbers: a newer broker's ServerError, which the client
 * names `ServerError(<n>)`; and a message's CompressionType, so that an entry compressed with a codec
 * this client does not know keeps its metadata and reaches the undecodable path as it arrived
 * (decompress() rejects the value there).
 */
const OPEN_ENUMS: ReadonlySet<string> = new Set<EnumName>(["ServerError", "CompressionType"]);

function buildRoot(): protobuf.Root {
  const nested: Record<string, object> = {};
  for (const [name, fields] of Object.entries(TABLE)) {
    const out: Record<string, object> = {};
    for (const [fieldName, spec] of Object.entries(fields)) {
      const field: Record<string, unknown> = {
        ...EDITION,
        id: spec.id,
        type: spec.type in ENUMS ? "int32" : (WIRE_TYPE[spec.type] ?? spec.type),
      };
      if (spec.rule !== undefined) field.rule = spec.rule;
      // proto2 leaves repeated scalars unpacked; say so, rather than rely on the library's default.
      if (spec.rule === "repeated" && !(spec.type in TABLE)) field.options = { packed: false };
      out[fieldName] = field;
    }
    nested[name] = { ...EDITION, fields: out };
  }
  return protobuf.Root.fromJSON({ nested } as protobuf.INamespace);
}

const root = buildRoot();

// Conversion between protobufjs's decoded objects (64-bit values as Long) and this module's plain
// objects (bigint or number), planned once per message type.
type FieldPlan =
  | { name: string; kind: "big"; repeated: boolean; signed: boolean }
  | { name: string; kind: "num"; repeated: boolean; signed: boolean }
  | { name: string; kind: "message"; repeated: boolean; type: string }
  | {
      name: string;
      kind: "enum";
      repeated: boolean;
      owner: string;
      type: string;
      known: Set<number>;
    }
  | { name: string; kind: "plain"; repeated: boolean };

const plans = new Map<string, FieldPlan[]>();
for (const [typeName, fields] of Object.entries(TABLE)) {
  plans.set(
    typeName,
    Object.entries(fields).map(([name, spec]): FieldPlan => {
      const repeated = spec.rule === "repeated";
      if (spec.type === "uint64" || spec.type === "int64")
        return { name, kind: "big", repeated, signed: spec.type === "int64" };
      if (spec.type === "uint64n" || spec.type === "int64n")
        return { name, kind: "num", repeated, signed: spec.type === "int64n" };
      if (spec.type in TABLE) return { name, kind: "message", repeated, type: spec.type };
      if (spec.type in ENUMS && !OPEN_ENUMS.has(spec.type))
        return {
          name,
          kind: "enum",
          repeated,
          owner: typeName,
          type: spec.type,
          known: new Set(Object.values(ENUMS[spec.type as EnumName])),
        };
      return { name, kind: "plain", repeated };
    }),
  );
}

interface LongLike {
  low: number;
  high: number;
}

function longToBig(value: LongLike | number, signed: boolean): bigint {
  if (typeof value === "number") return BigInt(value);
  const big = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  return signed ? BigInt.asIntN(64, big) : big;
}

function longToNumber(value: LongLike | number, signed: boolean): number {
  if (typeof value === "number") return value;
  const high = signed ? value.high | 0 : value.high >>> 0;
  return high * 0x1_0000_0000 + (value.low >>> 0);
}

function bigToLong(value: bigint | number): LongLike | number {
  if (typeof value === "number") return value;
  const bits = BigInt.asUintN(64, value);
  return { low: Number(bits & 0xffffffffn) | 0, high: Number(bits >> 32n) | 0 };
}

function numberToLong(value: number): LongLike | number {
  // protobufjs writes a negative number through its own two's complement split; keep it a number.
  return value;
}

type Loose = Record<string, unknown>;

function toPlain(typeName: string, wire: Loose): Loose {
  const out: Loose = {};
  for (const plan of plans.get(typeName)!) {
    if (!Object.hasOwn(wire, plan.name)) continue;
    const value = wire[plan.name];
    if (value === undefined || value === null) continue;
    if (plan.repeated) {
      const list = value as unknown[];
      if (list.length === 0) continue;
      out[plan.name] = list.map((item) => convertIn(plan, item));
    } else {
      out[plan.name] = convertIn(plan, value);
    }
  }
  return out;
}

function convertIn(plan: FieldPlan, value: unknown): unknown {
  switch (plan.kind) {
    case "big":
      return longToBig(value as LongLike, plan.signed);
    case "num":
      return longToNumber(value as LongLike, plan.signed);
    case "message":
      return toPlain(plan.type, value as Loose);
    case "enum":
      if (!plan.known.has(value as number))
        throw new DecodeError(
          `${plan.owner}.${plan.name}: ${plan.type} ${String(value)} is unknown to this client`,
        );
      return value;
    default:
      return value;
  }
}

function toWire(typeName: string, plain: Loose): Loose {
  const out: Loose = {};
  for (const plan of plans.get(typeName)!) {
    const value = plain[plan.name];
    if (value === undefined) continue;
    out[plan.name] = plan.repeated
      ? (value as unknown[]).map((item) => convertOut(plan, item))
      : convertOut(plan, value);
  }
  return out;
}

function convertOut(plan: FieldPlan, value: unknown): unknown {
  switch (plan.kind) {
    case "big":
      return bigToLong(value as bigint);
    case "num":
      return numberToLong(value as number);
    case "message":
      return toWire(plan.type, value as Loose);
    default:
      return value;
  }
}

/** Encodes a message's plain shape to protobuf bytes and back. */
export interface Codec<T> {
  encode(value: T): Uint8Array;
  decode(bytes: Uint8Array): T;
}

// Typed by the message's name, so a codec carries the shape of the message it codes (the named
// types below are checked against it).
function codec<N extends MessageName>(typeName: N): Codec<Shape<N>> {
  const type = root.lookupType(typeName);
  return {
    encode: (value) => type.encode(toWire(typeName, value as Loose)).finish(),
    decode: (bytes) => {
      try {
        return toPlain(typeName, type.decode(bytes) as unknown as Loose) as Shape<N>;
      } catch (error) {
        if (error instanceof DecodeError) throw error;
        // protobufjs's own errors (a truncated field, a wrong wire type, a missing required field).
        throw new DecodeError(
          `unreadable ${typeName}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    },
  };
}

/** Encodes and decodes `BaseCommand`, the protobuf inside every frame. */
export const baseCommand: Codec<BaseCommand> = codec("BaseCommand");
/** Encodes and decodes the metadata a payload frame carries before the payload. */
export const messageMetadata: Codec<MessageMetadata> = codec("MessageMetadata");
/** Encodes and decodes the metadata before each message of a batch. */
export const singleMessageMetadata: Codec<SingleMessageMetadata> = codec("SingleMessageMetadata");
/** Decodes the broker's own metadata, present only when the broker adds it (0x0e02). */
export const brokerEntryMetadata: Codec<BrokerEntryMetadata> = codec("BrokerEntryMetadata");
/** Encodes and decodes a message id: the bytes `MessageId.toBytes` gives, as the Java client's. */
export const messageIdData: Codec<MessageIdData> = codec("MessageIdData");

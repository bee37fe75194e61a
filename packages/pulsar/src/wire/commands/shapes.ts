// The plain TypeScript shapes of the protocol's messages, derived from the field table so they
// cannot drift from it: a field added, removed, renamed, retyped or made required in the table
// changes its shape here, and every use of it is checked against that. Optional fields are absent
// when the peer did not send them (proto2 presence); a required field is always there.
import type { EnumName } from "./enums.js";
import type { FieldSpec, MESSAGES, MessageName, Scalar } from "./fieldTable.js";

type Table = typeof MESSAGES;

/** What each scalar is in JavaScript (see fieldTable.ts for the two kinds of 64-bit integer). */
interface ScalarValues {
  string: string;
  bytes: Uint8Array;
  bool: boolean;
  int32: number;
  uint32: number;
  int64: bigint;
  uint64: bigint;
  int64n: number;
  uint64n: number;
}

/**
 * One value of a field's type. An enum is a number, not its union of values: the open ones (a newer
 * broker's ServerError, a message's CompressionType; codec.ts) decode values this client does not
 * know, and the code reading them names or rejects those.
 */
type ValueOf<T extends string> = T extends Scalar
  ? ScalarValues[T]
  : T extends EnumName
    ? number
    : T extends MessageName
      ? Shape<T>
      : never;

type FieldValue<F extends FieldSpec> = F extends { readonly rule: "repeated" }
  ? ValueOf<F["type"]>[]
  : ValueOf<F["type"]>;

type Fields<N extends MessageName> = Table[N];

type RequiredKeys<N extends MessageName> = {
  [K in keyof Fields<N>]: Fields<N>[K] extends { readonly rule: "required" } ? K : never;
}[keyof Fields<N>];

/** One object type rather than an intersection, so editors and errors show the fields. */
type Flat<T> = { -readonly [K in keyof T]: T[K] };

/** The plain shape of message `N`: required fields as required properties, the rest optional. */
export type Shape<N extends MessageName> = [keyof Fields<N>] extends [never]
  ? Record<string, never>
  : Flat<
      {
        [K in keyof Fields<N> as K extends RequiredKeys<N> ? K : never]: FieldValue<
          Fields<N>[K] & FieldSpec
        >;
      } & {
        [K in keyof Fields<N> as K extends RequiredKeys<N> ? never : K]?: FieldValue<
          Fields<N>[K] & FieldSpec
        >;
      }
    >;

/**
 * Every field type the table names that is neither a scalar, an enum nor a message: `never` while
 * the table is sound (test/commandShapes.test-d.ts holds it to that, so a misspelt type fails the
 * typecheck rather than protobufjs at run time).
 */
export type UnknownFieldTypes = {
  [N in MessageName]: {
    [K in keyof Fields<N>]: Exclude<
      (Fields<N>[K] & FieldSpec)["type"],
      Scalar | EnumName | MessageName
    >;
  }[keyof Fields<N>];
}[MessageName];

export type MessageIdData = Shape<"MessageIdData">;
export type KeyValue = Shape<"KeyValue">;
export type MessageMetadata = Shape<"MessageMetadata">;
export type SingleMessageMetadata = Shape<"SingleMessageMetadata">;
export type BrokerEntryMetadata = Shape<"BrokerEntryMetadata">;
export type KeySharedMeta = Shape<"KeySharedMeta">;
export type CommandMessage = Shape<"CommandMessage">;
export type CommandSendReceipt = Shape<"CommandSendReceipt">;
export type CommandSendError = Shape<"CommandSendError">;
export type CommandActiveConsumerChange = Shape<"CommandActiveConsumerChange">;
export type CommandCloseProducer = Shape<"CommandCloseProducer">;
export type CommandCloseConsumer = Shape<"CommandCloseConsumer">;
export type CommandTopicMigrated = Shape<"CommandTopicMigrated">;
/** One command frame's protobuf: `type` says which one sub-command field is set. */
export type BaseCommand = Shape<"BaseCommand">;

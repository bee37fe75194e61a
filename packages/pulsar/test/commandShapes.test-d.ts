import { describe, expectTypeOf, it } from "vitest";
import { baseCommand, messageIdData, messageMetadata } from "../src/wire/commands/codec.js";
import type {
  BaseCommand,
  CommandSendReceipt,
  KeyValue,
  MessageIdData,
  MessageMetadata,
  Shape,
  UnknownFieldTypes,
} from "../src/wire/commands/shapes.js";

// Checked by `tsc` (pnpm typecheck) as well as by vitest's typecheck: the shapes are derived from
// the field table (src/wire/commands/fieldTable.ts), so these hold the derivation's rules to the
// protocol's messages.
describe("command shapes derived from the field table", () => {
  it("every field type the table names is a scalar, an enum or a message of the table", () => {
    expectTypeOf<UnknownFieldTypes>().toBeNever();
  });

  it("required fields are required, optional and repeated ones optional, messages nested", () => {
    expectTypeOf<MessageIdData>().toEqualTypeOf<{
      ledgerId: bigint;
      entryId: bigint;
      partition?: number;
      batchIndex?: number;
      ackSet?: bigint[];
      batchSize?: number;
      firstChunkMessageId?: MessageIdData;
    }>();
    expectTypeOf<KeyValue>().toEqualTypeOf<{ key: string; value: string }>();
  });

  it("64-bit fields are bigint, or numbers where the table says uint64n/int64n; enums numbers", () => {
    expectTypeOf<CommandSendReceipt>().toEqualTypeOf<{
      producerId: number;
      sequenceId: bigint;
      messageId?: MessageIdData;
      highestSequenceId?: bigint;
    }>();
    expectTypeOf<MessageMetadata["publishTime"]>().toEqualTypeOf<number>();
    expectTypeOf<Required<MessageMetadata>["deliverAtTime"]>().toEqualTypeOf<number>();
    expectTypeOf<Required<MessageMetadata>["highestSequenceId"]>().toEqualTypeOf<bigint>();
    expectTypeOf<Required<MessageMetadata>["compression"]>().toEqualTypeOf<number>();
    expectTypeOf<Required<MessageMetadata>["orderingKey"]>().toEqualTypeOf<Uint8Array>();
    expectTypeOf<Required<MessageMetadata>["properties"]>().toEqualTypeOf<KeyValue[]>();
  });

  it("a message without fields is an empty record, and every sub-command is optional", () => {
    expectTypeOf<Shape<"CommandPing">>().toEqualTypeOf<Record<string, never>>();
    expectTypeOf<Required<BaseCommand>["ping"]>().toEqualTypeOf<Record<string, never>>();
    expectTypeOf<BaseCommand["type"]>().toEqualTypeOf<number>();
    expectTypeOf<{ type: number }>().toExtend<BaseCommand>();
  });

  it("a shape rejects a field the table does not have, and a field of the wrong type", () => {
    // @ts-expect-error: not a field of MessageIdData
    const extra: MessageIdData = { ledgerId: 1n, entryId: 2n, ledger: 3 };
    // @ts-expect-error: ledgerId is a bigint (uint64)
    const wrong: MessageIdData = { ledgerId: 1, entryId: 2n };
    // @ts-expect-error: entryId is required
    const missing: MessageIdData = { ledgerId: 1n };
    expectTypeOf([extra, wrong, missing]).items.toEqualTypeOf<MessageIdData>();
  });

  it("each codec carries the shape of the message it codes", () => {
    expectTypeOf(baseCommand.decode).returns.toEqualTypeOf<BaseCommand>();
    expectTypeOf(baseCommand.encode).parameter(0).toEqualTypeOf<BaseCommand>();
    expectTypeOf(messageMetadata.decode).returns.toEqualTypeOf<MessageMetadata>();
    expectTypeOf(messageIdData.decode).returns.toEqualTypeOf<MessageIdData>();
  });
});

// A message's position: ledger and entry in the topic's (or partition's) managed ledger, the
// partition, and for a message inside a batch its index and the batch's size. Ids compare in
// ledger, entry, batch index order, as the broker orders them.
import { RustStreamError } from "@ruststream/core";
import { messageIdData } from "./commands/codec.js";
import type { MessageIdData } from "./commands/shapes.js";

export class MessageId {
  constructor(
    readonly ledgerId: bigint,
    readonly entryId: bigint,
    /** -1 on a non-partitioned topic. */
    readonly partition: number = -1,
    /** -1 when the message was not sent in a batch. */
    readonly batchIndex: number = -1,
    /** The number of messages in the batch, 0 when not batched. */
    readonly batchSize: number = 0,
  ) {}

  /** The earliest position of a topic (what `initialPosition: "earliest"` and seeks to it use). */
  static readonly earliest = new MessageId(-1n, -1n);
  /** The position after the last message. */
  static readonly latest = new MessageId(0x7fffffffffffffffn, 0x7fffffffffffffffn);

  /** The protobuf form, as the Java client's `toByteArray()` writes it. */
  toBytes(): Uint8Array {
    return messageIdData.encode(this.toData());
  }

  /** Reads what `toBytes()` wrote (or the Java client's `toByteArray()`). */
  static fromBytes(bytes: Uint8Array): MessageId {
    let data: MessageIdData;
    try {
      data = messageIdData.decode(bytes);
    } catch (error) {
      throw new RustStreamError("invalid-argument", `not a Pulsar message id: ${String(error)}`);
    }
    return MessageId.fromData(data);
  }

  static fromData(data: MessageIdData, partition?: number): MessageId {
    return new MessageId(
      BigInt.asIntN(64, data.ledgerId),
      BigInt.asIntN(64, data.entryId),
      partition ?? data.partition ?? -1,
      data.batchIndex ?? -1,
      data.batchSize ?? 0,
    );
  }

  toData(): MessageIdData {
    const data: MessageIdData = {
      ledgerId: BigInt.asUintN(64, this.ledgerId),
      entryId: BigInt.asUintN(64, this.entryId),
    };
    if (this.partition >= 0) data.partition = this.partition;
    if (this.batchIndex >= 0) data.batchIndex = this.batchIndex;
    if (this.batchSize > 0) data.batchSize = this.batchSize;
    return data;
  }

  /** The entry this message is in, without its batch index. */
  entry(): MessageId {
    return this.batchIndex < 0 ? this : new MessageId(this.ledgerId, this.entryId, this.partition);
  }

  /** Negative, zero or positive as this id comes before, at or after `other`. */
  compareTo(other: MessageId): number {
    if (this.ledgerId !== other.ledgerId) return this.ledgerId < other.ledgerId ? -1 : 1;
    if (this.entryId !== other.entryId) return this.entryId < other.entryId ? -1 : 1;
    return this.batchIndex - other.batchIndex;
  }

  equals(other: MessageId): boolean {
    return (
      this.ledgerId === other.ledgerId &&
      this.entryId === other.entryId &&
      this.partition === other.partition &&
      this.batchIndex === other.batchIndex
    );
  }

  /** `ledger:entry:partition:batchIndex`, the Java client's text form. */
  toString(): string {
    return `${this.ledgerId}:${this.entryId}:${this.partition}:${this.batchIndex}`;
  }

  /** Reads `toString()`'s form back; also accepts `ledger:entry` and `ledger:entry:partition`. */
  static parse(text: string): MessageId {
    const parts = text.split(":");
    if (parts.length < 2 || parts.length > 4 || parts.some((p) => !/^-?\d+$/.test(p)))
      throw new RustStreamError(
        "invalid-argument",
        `not a Pulsar message id: ${JSON.stringify(text)}; expected ledger:entry:partition:batchIndex`,
      );
    return new MessageId(
      BigInt(parts[0]!),
      BigInt(parts[1]!),
      parts[2] === undefined ? -1 : Number(parts[2]),
      parts[3] === undefined ? -1 : Number(parts[3]),
    );
  }
}

// A MESSAGE frame's entry turned into messages: its checksum checked, its payload decompressed
// (within the connection's max message size), a batch unpacked, and a batch's messages acked before
// (or marked acked by the broker, or compacted out) skipped. An entry that fails any step yields
// none of its messages, and says why: its bytes never throw out of here.
import { readBatch } from "../batch.js";
import { CompressionType } from "../commands/enums.js";
import type { CommandMessage } from "../commands/shapes.js";
import { checkUncompressedSize, decompress } from "../compression.js";
import type { PayloadSection } from "../frame.js";
import { propertiesOf } from "../keyValues.js";
import type { Queue } from "../queue.js";
import type { UndecodableReason } from "../undecodable.js";
import type { Acks } from "./acks.js";
import { Message, type MessageOwner, type ReceivedEntry } from "./message.js";

/** The subscribe an entry came through: the same for every entry until the next subscribe. */
export interface EntrySource {
  /** The topic, or the partition's name. */
  readonly topic: string;
  /** -1 on a non-partitioned topic. */
  readonly partition: number;
  readonly owner: MessageOwner;
  readonly consumerId: number;
  /** Where a batch's acks so far are kept. */
  readonly acks: Acks;
  /** The connection's max message size: no entry is decompressed past it. */
  readonly maxMessageSize: number;
}

/** Why an entry cannot be handed out. */
export interface Undecodable {
  readonly reason: UndecodableReason;
  readonly error: unknown;
}

function bitSet(words: bigint[], index: number): boolean {
  const word = words[index >> 6];
  return word !== undefined && ((word >> BigInt(index & 63)) & 1n) === 1n;
}

/**
 * Decodes the entry into `queue`. Returns how many of its messages were skipped (each owes its
 * flow permit back), or why the entry cannot be decoded, in which case nothing was queued.
 */
export function decodeEntry(
  command: CommandMessage,
  section: PayloadSection,
  source: EntrySource,
  queue: Queue<Message>,
): number | Undecodable {
  // Over the limit, as Pulsar's Java client reports a payload larger than the max message size.
  if (section.oversized !== undefined)
    return { reason: "UncompressedSizeCorruption", error: section.oversized };
  if (!section.checksumValid)
    return {
      reason: "ChecksumMismatch",
      error: "the CRC-32C over its metadata and payload does not match",
    };
  // Pulsar's Java client reports metadata it cannot parse as a checksum mismatch too.
  if (section.unreadable !== undefined)
    return { reason: "ChecksumMismatch", error: `unreadable entry: ${section.unreadable}` };
  const metadata = section.metadata;
  const count = metadata.numMessagesInBatch;
  let payload = section.payload;
  const compression = metadata.compression ?? CompressionType.NONE;
  if (compression !== CompressionType.NONE) {
    const size = metadata.uncompressedSize ?? 0;
    try {
      checkUncompressedSize(size, source.maxMessageSize);
    } catch (error) {
      return { reason: "UncompressedSizeCorruption", error };
    }
    try {
      payload = decompress(compression, payload, size, source.maxMessageSize);
    } catch (error) {
      return { reason: "DecompressionError", error };
    }
  }
  const data = command.messageId;
  const ledgerId = BigInt.asIntN(64, data.ledgerId);
  const entryId = BigInt.asIntN(64, data.entryId);
  const redeliveryCount = command.redeliveryCount ?? 0;
  if (count === undefined) {
    const entry: ReceivedEntry = {
      ledgerId,
      entryId,
      partition: source.partition,
      batchSize: 0,
      consumer: source.owner,
      consumerId: source.consumerId,
      tracker: undefined,
    };
    queue.push(
      new Message(
        entry,
        -1,
        source.topic,
        payload,
        propertiesOf(metadata.properties),
        metadata.publishTime,
        redeliveryCount,
        metadata.producerName,
        metadata.sequenceId,
        metadata.partitionKey,
        metadata.orderingKey,
        metadata.eventTime || undefined,
      ),
    );
    return 0;
  }
  let entries: ReturnType<typeof readBatch>;
  try {
    entries = readBatch(payload, count);
  } catch (error) {
    return { reason: "BatchDeSerializeError", error };
  }
  // readBatch checked the count: at least 1, and exactly the messages the batch holds.
  const tracker = source.acks.trackerFor(ledgerId, entryId, count);
  const entry: ReceivedEntry = {
    ledgerId,
    entryId,
    partition: source.partition,
    batchSize: count,
    consumer: source.owner,
    consumerId: source.consumerId,
    tracker,
  };
  let skipped = 0;
  entries.forEach((item, index) => {
    // Skip what was acked before this entry came back, and what the broker marks as acked.
    const ackedByBroker = command.ackSet !== undefined && !bitSet(command.ackSet, index);
    if (tracker.acked[index] || item.metadata.compactedOut || ackedByBroker) {
      skipped++;
      return;
    }
    const single = item.metadata;
    queue.push(
      new Message(
        entry,
        index,
        source.topic,
        item.payload,
        propertiesOf(single.properties),
        metadata.publishTime,
        redeliveryCount,
        metadata.producerName,
        single.sequenceId ?? metadata.sequenceId + BigInt(index),
        single.partitionKey,
        single.orderingKey,
        single.eventTime || undefined,
      ),
    );
  });
  return skipped;
}

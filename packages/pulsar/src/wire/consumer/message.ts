// A received message, and what the messages of one broker entry share.
import { MessageId } from "../messageId.js";

/** A batch entry's acks so far: the broker acks whole entries, so the last message's ack sends it. */
export interface BatchTracker {
  /** The entry's key in the consumer's trackers. */
  readonly key: string;
  readonly acked: Uint8Array;
  remaining: number;
}

/** Who settles a message: the partition consumer it came through. */
export interface MessageOwner {
  ack(message: Message): void;
  ackCumulative(message: Message): void;
  nack(message: Message): void;
}

/**
 * What the messages of one broker entry share: its position, and which partition consumer (and
 * which subscribe of it) it came through. One per entry rather than a message id, a map entry and
 * an ack key per message: the consumer's profile showed that per-message work, and the collector
 * behind it, as its largest share.
 */
export interface ReceivedEntry {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
  /** -1 on a non-partitioned topic. */
  readonly partition: number;
  /** The number of messages in the batch, 0 when not batched. */
  readonly batchSize: number;
  readonly consumer: MessageOwner;
  readonly consumerId: number;
  /** A batch's acks so far, shared with redeliveries of the same entry. */
  readonly tracker: BatchTracker | undefined;
}

// Reads a message's entry, kept off the public Message type; undefined for anything else.
let readEntry: (message: unknown) => ReceivedEntry | undefined;

/** The entry a message came in, or `undefined` for anything that is not a received message. */
export function entryOf(message: unknown): ReceivedEntry | undefined {
  return readEntry(message);
}

/** A received message. */
export class Message {
  readonly #entry: ReceivedEntry;
  #messageId: MessageId | undefined;

  static {
    readEntry = (message) =>
      typeof message === "object" && message !== null && #entry in message
        ? (message as Message).#entry
        : undefined;
  }

  constructor(
    entry: ReceivedEntry,
    /** Its index in the batch; -1 when not sent in a batch. */
    readonly batchIndex: number,
    /** The topic it came from: a partition's name on a partitioned topic. */
    readonly topic: string,
    readonly payload: Uint8Array,
    readonly properties: ReadonlyMap<string, string>,
    readonly publishTime: number,
    /** 0 on first delivery; counted by the broker on Shared and Key_Shared subscriptions. */
    readonly redeliveryCount: number,
    readonly producerName: string,
    readonly sequenceId: bigint,
    readonly key: string | undefined,
    readonly orderingKey: Uint8Array | undefined,
    readonly eventTime: number | undefined,
  ) {
    this.#entry = entry;
  }

  /** Made on first use: acks read the entry, and most messages are only acked. */
  get messageId(): MessageId {
    const e = this.#entry;
    this.#messageId ??= new MessageId(
      e.ledgerId,
      e.entryId,
      e.partition,
      this.batchIndex,
      e.batchSize,
    );
    return this.#messageId;
  }

  /** The partition it came from; -1 on a non-partitioned topic. */
  get partition(): number {
    return this.#entry.partition;
  }
}

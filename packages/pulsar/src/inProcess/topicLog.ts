import { MessageId } from "../wire/messageId.js";
import type { OutgoingMessage as WireMessage } from "../wire/producer/producerOptions.js";

/** One stored message: what a producer sent, where it sits, and when the broker took it. */
export interface Entry {
  /** Its place in the log, which is also its entry id. */
  readonly index: number;
  readonly id: MessageId;
  readonly message: WireMessage;
  readonly publishTime: number;
  /** The topic's full name (a partition's name where partitioned). */
  readonly topic: string;
  readonly partition: number;
}

/** What the log needs from a subscription reading it (the cursor, which imports this file). */
export interface LogReader {
  readonly durable: boolean;
  /** A new entry arrived. */
  added(entry: Entry): void;
}

let ledgers = 0n;

/**
 * One topic, or one partition of a partitioned topic: the log of what was published, and the
 * subscriptions (cursors) reading it. A persistent topic keeps every entry, so a subscription
 * created at the earliest position reads them all; a non-persistent one hands an entry only to
 * the subscriptions that have a consumer when it arrives, as the broker does.
 */
export class TopicLog {
  readonly name: string;
  readonly partition: number;
  readonly persistent: boolean;
  /** One ledger per topic, so ids of different topics differ as the broker's do. */
  readonly ledgerId = ++ledgers;
  readonly entries: Entry[] = [];
  readonly cursors = new Map<string, LogReader>();

  constructor(name: string, partition: number) {
    this.name = name;
    this.partition = partition;
    this.persistent = name.startsWith("persistent://");
  }

  append(message: WireMessage, publishTime: number): Entry {
    const index = this.entries.length;
    const entry: Entry = {
      index,
      id: new MessageId(this.ledgerId, BigInt(index), this.partition),
      message,
      publishTime,
      topic: this.name,
      partition: this.partition,
    };
    this.entries.push(entry);
    for (const cursor of this.cursors.values()) cursor.added(entry);
    return entry;
  }

  /** The id of the last entry, or ledger and entry -1 when there is none (as the broker answers). */
  lastId(): MessageId {
    const last = this.entries[this.entries.length - 1];
    return last?.id ?? new MessageId(-1n, -1n, this.partition);
  }

  /** The place a message id stands for: its own entry, or the first after it (clamped to the end). */
  indexOf(id: MessageId): number {
    if (id.ledgerId < this.ledgerId) return 0;
    if (id.ledgerId > this.ledgerId) return this.entries.length;
    const entry = Number(id.entryId);
    return Math.max(0, Math.min(entry, this.entries.length));
  }

  /** The first entry published at or after `time`. */
  indexAt(time: number): number {
    const found = this.entries.findIndex((e) => e.publishTime >= time);
    return found < 0 ? this.entries.length : found;
  }
}

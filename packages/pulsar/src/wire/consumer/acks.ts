// What a partition consumer tells the broker without waiting for an answer: acks (individual ones
// grouped per event-loop turn, cumulative ones at once), negative acks (after the consumer's delay)
// and the flow permits it returns. Acks and permits leave in one socket write, acks first, so the
// broker applies them before it pushes more.
import { AckType, CommandType } from "../commands/enums.js";
import type { BaseCommand, MessageIdData } from "../commands/shapes.js";
import type { Connection } from "../connection.js";
import type { BatchTracker, Message, ReceivedEntry } from "./message.js";

/** The subscribe the acks go through: both change with every subscribe. */
export interface AckChannel {
  /** The live subscribe's connection; `undefined` while there is none. */
  connection(): Connection | undefined;
  consumerId(): number;
}

const entryKey = (ledgerId: bigint, entryId: bigint): string => `${ledgerId}:${entryId}`;

const unsigned = (ledgerId: bigint, entryId: bigint): MessageIdData => ({
  ledgerId: BigInt.asUintN(64, ledgerId),
  entryId: BigInt.asUintN(64, entryId),
});

export class Acks {
  readonly #trackers = new Map<string, BatchTracker>();
  #pendingAcks: MessageIdData[] = [];
  #flushScheduled = false;
  readonly #nacked = new Map<string, MessageIdData>();
  #nackTimer: NodeJS.Timeout | undefined;
  #permitsToReturn = 0;
  /** Permits go back in one FLOW once half the receiver queue's worth was taken. */
  readonly #flowThreshold: number;
  readonly #channel: AckChannel;
  readonly #negativeAckDelayMs: number;

  constructor(channel: AckChannel, receiverQueueSize: number, negativeAckDelayMs: number) {
    this.#channel = channel;
    this.#negativeAckDelayMs = negativeAckDelayMs;
    this.#flowThreshold = Math.max(1, receiverQueueSize >> 1);
  }

  /** The tracker of a batch entry: the one its earlier deliveries made, or a new one. */
  trackerFor(ledgerId: bigint, entryId: bigint, count: number): BatchTracker {
    const key = entryKey(ledgerId, entryId);
    let tracker = this.#trackers.get(key);
    if (!tracker) {
      tracker = { key, acked: new Uint8Array(count), remaining: count };
      this.#trackers.set(key, tracker);
    }
    return tracker;
  }

  /** Forgets every batch's acks: after a seek, what comes again is acked message by message anew. */
  clearTrackers(): void {
    this.#trackers.clear();
  }

  /** Acks one message; a batch's entry goes once all its messages are acked. */
  ack(entry: ReceivedEntry, batchIndex: number): void {
    // A tracker a seek cleared no longer counts: the message is acked on its own, as before.
    const tracker = entry.tracker;
    if (batchIndex >= 0 && tracker !== undefined && this.#trackers.get(tracker.key) === tracker) {
      if (!tracker.acked[batchIndex]) {
        tracker.acked[batchIndex] = 1;
        tracker.remaining--;
      }
      if (tracker.remaining > 0) return; // the broker acks whole entries: wait for the rest
      this.#trackers.delete(tracker.key);
    }
    this.ackEntry(entry.ledgerId, entry.entryId);
  }

  /** Acks a whole entry with the acks of this turn. */
  ackEntry(ledgerId: bigint, entryId: bigint): void {
    this.#pendingAcks.push(unsigned(ledgerId, entryId));
    // Acks made in one turn of the event loop travel in one ACK command.
    this.#scheduleFlush();
  }

  /** Acks an entry that could not be decoded, at once, with the reason the broker records. */
  ackInvalid(entry: MessageIdData, validationError: number): void {
    this.#channel.connection()?.send({
      type: CommandType.ACK,
      ack: {
        consumerId: this.#channel.consumerId(),
        ackType: AckType.Individual,
        messageId: [{ ledgerId: entry.ledgerId, entryId: entry.entryId }],
        validationError,
      },
    });
  }

  /** Acks this message and everything before it in its partition. */
  ackCumulative(message: Message): void {
    const id = message.messageId;
    const ledgerId = id.ledgerId;
    let entryId = id.entryId;
    if (id.batchIndex >= 0 && id.batchIndex < id.batchSize - 1) {
      // Part of a batch: the entry before is acked now, this one's indexes up to here locally.
      const key = entryKey(id.ledgerId, id.entryId);
      const tracker = this.#trackers.get(key) ?? {
        key,
        acked: new Uint8Array(id.batchSize),
        remaining: id.batchSize,
      };
      for (let i = 0; i <= id.batchIndex; i++)
        if (!tracker.acked[i]) {
          tracker.acked[i] = 1;
          tracker.remaining--;
        }
      this.#trackers.set(key, tracker);
      if (entryId === 0n) return;
      entryId -= 1n;
    }
    for (const [key] of this.#trackers) {
      const [l, e] = key.split(":").map(BigInt) as [bigint, bigint];
      if (l < ledgerId || (l === ledgerId && e <= entryId)) this.#trackers.delete(key);
    }
    this.flush();
    this.#channel.connection()?.send({
      type: CommandType.ACK,
      ack: {
        consumerId: this.#channel.consumerId(),
        ackType: AckType.Cumulative,
        messageId: [unsigned(ledgerId, entryId)],
      },
    });
  }

  /** Asks for an entry again (Shared, Key_Shared), after the consumer's negative-ack delay. */
  nack(ledgerId: bigint, entryId: bigint): void {
    this.#nacked.set(entryKey(ledgerId, entryId), unsigned(ledgerId, entryId));
    this.#nackTimer ??= setTimeout(() => this.#flushNacks(), this.#negativeAckDelayMs);
  }

  #flushNacks(): void {
    this.#nackTimer = undefined;
    if (this.#nacked.size === 0) return;
    const messageIds = [...this.#nacked.values()];
    this.#nacked.clear();
    this.flush();
    this.#channel.connection()?.send({
      type: CommandType.REDELIVER_UNACKNOWLEDGED_MESSAGES,
      redeliverUnacknowledgedMessages: { consumerId: this.#channel.consumerId(), messageIds },
    });
  }

  /** Counts permits to return (messages taken or dropped); they go back in one FLOW at half the queue. */
  returnPermits(count: number): void {
    this.#permitsToReturn += count;
    if (this.#permitsToReturn >= this.#flowThreshold) this.#scheduleFlush();
  }

  /** A new subscribe grants the whole receiver queue anew: nothing is owed from the last one. */
  resetPermits(): void {
    this.#permitsToReturn = 0;
  }

  /**
   * Acks and returned permits go out at the end of the event loop's turn, in one socket write:
   * writing the FLOW as each half queue was taken cost a system call of its own, which the
   * consumer's profile showed as the largest single share of its CPU time.
   */
  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends the acks made so far, then the permits to return if they reached the threshold. */
  flush(): void {
    this.#flushScheduled = false;
    // Without a live subscribe the acks wait for the next one (attach sends them): the broker
    // redelivers every unacked message to it, and these were handled. An ack of a message the
    // broker already forgot is harmless. The next subscribe grants the whole queue anew.
    const connection = this.#channel.connection();
    if (connection === undefined) return;
    const consumerId = this.#channel.consumerId();
    const commands: BaseCommand[] = [];
    if (this.#pendingAcks.length > 0) {
      commands.push({
        type: CommandType.ACK,
        ack: { consumerId, ackType: AckType.Individual, messageId: this.#pendingAcks },
      });
    }
    // After the acks: the broker applies them before it pushes more.
    const permits = this.#permitsToReturn;
    if (permits >= this.#flowThreshold) {
      commands.push({ type: CommandType.FLOW, flow: { consumerId, messagePermits: permits } });
    }
    if (commands.length === 0 || !connection.sendAll(commands)) return;
    if (this.#pendingAcks.length > 0) this.#pendingAcks = [];
    if (permits >= this.#flowThreshold) this.#permitsToReturn -= permits;
  }

  /** Sends every ack and negative ack still waiting: the consumer is closing. */
  flushAll(): void {
    this.flush();
    if (this.#nackTimer !== undefined) clearTimeout(this.#nackTimer);
    this.#flushNacks();
  }
}

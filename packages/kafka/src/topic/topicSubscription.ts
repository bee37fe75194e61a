import {
  type BacklogCounts,
  isRustStreamError,
  type RawMessage,
  RustStreamError,
  type SeekableSubscription,
} from "@ruststream/core";
import {
  backlogMark,
  type HostedSubscription,
  PullSubscription,
  seekMark,
} from "@ruststream/core/broker";
import {
  type ConsumedRecord,
  type ConsumerHooks,
  type LinkAdmin,
  type LinkConsumer,
  type PartitionOffset,
  type ProducedRecord,
  partitionKey,
  type TopicPartition,
} from "../client/link.js";
import type { KafkaHost } from "../host.js";
import { isKafkaPosition, KafkaPosition } from "../position.js";
import type { KafkaTopic } from "../sources.js";
import type { TransactionLine } from "../transactions.js";
import { groupBacklog } from "./backlog.js";
import { ensureTopic, startOffsets } from "./starts.js";
import { type DeliveryOwner, KafkaDelivery } from "./topicDelivery.js";
import { Tracker } from "./tracker.js";
import { type OutputCause, TransactionWindow } from "./window.js";

/**
 * A consumer group member reading one topic (and its retry topic). The engine pushes fetched
 * records into a bounded buffer (it pauses fetching when the buffer holds `prefetch`); `next()` and
 * `nextBatch()` hand them out, requeued deliveries first. Under `tracked` every hand-out and settle
 * goes through the partition's watermark books, and the engine is told the position to commit.
 */
export class KafkaTopicSubscription
  extends PullSubscription<KafkaDelivery>
  implements SeekableSubscription<KafkaDelivery>, DeliveryOwner, ConsumerHooks, HostedSubscription
{
  readonly [seekMark] = true as const;
  /** The backlog is counted where the engine's admin may be asked at a scrape (`countsBacklog`). */
  readonly [backlogMark]: boolean;
  readonly name: string;
  readonly group: string;
  readonly commit: "auto" | "tracked" | "transactional";
  readonly #host: KafkaHost;
  readonly #source: KafkaTopic;
  readonly #admin: LinkAdmin;
  readonly #tracker = new Tracker();
  readonly #held = new Map<string, TopicPartition>();
  #buffer: ConsumedRecord[] = [];
  #head = 0;
  #requeued: KafkaDelivery[] = [];
  /**
   * How many are handed out and not settled: under `tracked`, the member stays in the group until
   * they are. A count, not a set of them: a set's tables, rebuilt as deliveries churn through, were
   * among what a tracked drain promoted out of V8's young generation.
   */
  #out = 0;
  #consumer!: LinkConsumer;
  #wake: (() => void) | undefined;
  #paused = false;
  #failed: RustStreamError | undefined;
  #leaving: Promise<void> | undefined;
  /** Under `transactional`: the transactions that commit outputs and positions together. */
  #window: TransactionWindow | undefined;

  private constructor(
    host: KafkaHost,
    source: KafkaTopic,
    group: string,
    commit: "auto" | "tracked" | "transactional",
  ) {
    super();
    this.#host = host;
    this.#source = source;
    this.#admin = host.link.admin;
    this[backlogMark] = this.#admin.countsBacklog;
    this.name = source.name;
    this.group = group;
    this.commit = commit;
  }

  /** Makes sure the topics exist, joins the group and waits for the first assignment. */
  static async open(
    host: KafkaHost,
    source: KafkaTopic,
    settings: {
      readonly group: string;
      readonly commit: "auto" | "tracked" | "transactional";
      /** Under `transactional`, the transactions' producer line. */
      readonly line?: TransactionLine;
    },
  ): Promise<KafkaTopicSubscription> {
    const subscription = new KafkaTopicSubscription(host, source, settings.group, settings.commit);
    if (settings.line !== undefined) {
      subscription.#window = new TransactionWindow(subscription.#windowOwner(), settings.line);
    }
    for (const topic of source.topics) {
      await ensureTopic(subscription.#admin, topic, source.create);
    }
    try {
      subscription.#consumer = host.link.consumer(
        {
          group: settings.group,
          topics: source.topics,
          commit: settings.commit,
          start: source.start,
          assignment: source.assignment,
          config: source.properties,
        },
        subscription,
      );
    } catch (error) {
      if (isRustStreamError(error)) throw error;
      // The client refused its properties (librdkafka checks each one as the consumer is built).
      throw new RustStreamError(
        "invalid-argument",
        `the consumer for "${source.name}" refused its configuration: ${(error as Error).message}; check the raw config entries of the KafkaBroker and the KafkaTopic`,
        { cause: error },
      );
    }
    try {
      await subscription.#consumer.start();
    } catch (error) {
      await subscription.#consumer.close().catch(() => undefined);
      throw error;
    }
    if (subscription.#failed !== undefined) {
      await subscription.#consumer.close().catch(() => undefined);
      throw subscription.#failed;
    }
    return subscription;
  }

  /**
   * The group's lag over every partition of its topics (the retry topic too), as `ready`: from
   * the admin connection, so the whole group's, whichever member holds a partition. No `leased`:
   * see the README's Backlog section.
   */
  backlog(): Promise<BacklogCounts> {
    return groupBacklog(this.#admin, {
      group: this.group,
      topics: this.#source.topics,
      start: this.#source.start,
    });
  }

  /** The partitions this member holds now. */
  get assignment(): readonly TopicPartition[] {
    return [...this.#held.values()];
  }

  /**
   * Moves this member's read position (never the group's committed one, and only partitions this
   * member holds; the next rebalance discards it). An offset names one partition and must lie
   * between the partition's first kept record and its end; a time, the beginning or the end moves
   * every partition held.
   */
  async seek(position: KafkaPosition): Promise<void> {
    this.seekTo(position, isKafkaPosition, "a Kafka position");
    const targets = await this.#targets(position);
    this.#host.assertOpen();
    const moves: Promise<void>[] = [];
    for (const target of targets) {
      const key = partitionKey(target);
      if (!this.#held.has(key)) continue;
      // In one synchronous step with the engine's seek: nothing fetched before it slips in between.
      this.#tracker.reset(key);
      this.#purge(key);
      this.#window?.started(target);
      moves.push(this.#consumer.seek(target));
    }
    await Promise.all(moves);
  }

  parsePosition(text: string): KafkaPosition {
    return KafkaPosition.parse(text);
  }

  async close(): Promise<void> {
    if (!this.markClosed()) return;
    this.#wake?.();
    this.#purgeAll();
    this.#consumer.pause();
    // Deliveries still open keep the member in the group, so their settles still commit; it
    // leaves with the last of them, or at shutdown.
    if (this.commit === "auto" || this.#out === 0) await this.#leave();
  }

  // ConsumerHooks: what the engine reports.

  async assigned(partitions: readonly TopicPartition[]): Promise<readonly PartitionOffset[]> {
    const starts = await startOffsets(this.#consumer, this.#admin, partitions, this.#source.start);
    for (const p of partitions) {
      const key = partitionKey(p);
      this.#held.set(key, p);
      this.#tracker.reset(key);
      this.#purge(key);
    }
    for (const start of starts) this.#window?.started(start);
    return starts;
  }

  async revoked(partitions: readonly TopicPartition[]): Promise<void> {
    // What was settled is committed, with its outputs, while the partitions are still this
    // member's: the next owner starts after it and produces none of it again.
    await this.#window?.flush();
    for (const p of partitions) {
      const key = partitionKey(p);
      this.#held.delete(key);
      this.#tracker.forget(key);
      this.#purge(key);
      this.#window?.forget(p);
    }
  }

  records(records: readonly ConsumedRecord[]): void {
    if (this.closed) return;
    for (const record of records) this.#buffer.push(record);
    if (!this.#paused && this.#buffered() >= this.#source.prefetch) {
      this.#paused = true;
      this.#consumer.pause();
    }
    this.#wake?.();
  }

  failed(error: unknown): void {
    this.#failed ??= isRustStreamError(error)
      ? error
      : new RustStreamError(
          "broker-failure",
          `the consumer of "${this.name}" in group "${this.group}" failed: ${(error as Error)?.message ?? String(error)}`,
          { cause: error },
        );
    this.#wake?.();
  }

  // DeliveryOwner: what deliveries report.

  assertOpen(): void {
    this.#host.assertOpen();
  }

  settled(delivery: KafkaDelivery): void {
    this.#settledOne();
    const record = delivery.record;
    const book = delivery.book;
    if (book !== undefined) {
      const position = book.settle(record.offset);
      if (position !== undefined) {
        const stored = { topic: record.topic, partition: record.partition, offset: position };
        if (this.#window === undefined) this.#consumer.store(stored);
        else this.#window.settled(stored);
      }
    }
    this.#consumer.released?.(record);
    if (this.closed && this.#out === 0) void this.#leave();
  }

  requeue(delivery: KafkaDelivery): void {
    this.#settledOne();
    this.#window?.unstage(causeOf(delivery));
    // A partition sought or taken away since: its committed position still pins the record, so the
    // partition's next reader gets it; serving it here would run it in the wrong place.
    if (!this.closed && delivery.book?.open === true) {
      this.#requeued.push(delivery);
      this.#wake?.();
    }
    if (this.closed && this.#out === 0) void this.#leave();
  }

  stage(delivery: KafkaDelivery, record: ProducedRecord, raw: RawMessage): boolean {
    if (this.#window === undefined) return false;
    this.#window.stage(causeOf(delivery), record, raw);
    return true;
  }

  /** Under `transactional`: transactions that failed, each replayed from the last committed one. */
  get failedTransactions(): number {
    return this.#window?.failures ?? 0;
  }

  // HostedSubscription: what the connection does at shutdown.

  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#wake?.();
  }

  async surrender(): Promise<number> {
    const open = this.#out;
    this.#out = 0;
    this.#purgeAll();
    await this.#leave();
    return open;
  }

  // Pulling.

  protected async pull(max: number): Promise<KafkaDelivery[]> {
    for (;;) {
      const revoked = this.revokedWith;
      if (revoked !== undefined) throw revoked;
      if (this.#failed !== undefined) throw this.#failed;
      if (this.closed) return [];
      const handed = this.#handOut(max);
      if (handed.length > 0) return handed;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }

  #handOut(max: number): KafkaDelivery[] {
    const out: KafkaDelivery[] = [];
    const tracked = this.commit !== "auto";
    while (out.length < max) {
      let delivery: KafkaDelivery;
      const again = this.#requeued.shift();
      if (again !== undefined) {
        if (again.book?.open !== true) continue;
        delivery = new KafkaDelivery(this, again.record, again.redeliveryCount + 1, again.book);
      } else if (this.#head < this.#buffer.length) {
        const record = this.#buffer[this.#head++]!;
        const book = tracked
          ? this.#tracker.delivered(partitionKey(record), record.offset)
          : undefined;
        delivery = new KafkaDelivery(this, record, 1, book);
      } else {
        break;
      }
      if (tracked) this.#out++;
      out.push(delivery);
    }
    if (this.#head > 0 && this.#head === this.#buffer.length) {
      this.#buffer = [];
      this.#head = 0;
    }
    if (this.#paused && this.#buffered() <= this.#source.prefetch / 2) {
      this.#paused = false;
      this.#consumer.resume();
    }
    return out;
  }

  /**
   * One handed out is settled or back. Only `tracked` counts them; a delivery settled after a
   * surrender was counted before it, when the count went to 0 (nothing is handed out once closed).
   */
  #settledOne(): void {
    if (this.commit !== "auto" && this.#out > 0) this.#out--;
  }

  #buffered(): number {
    return this.#buffer.length - this.#head;
  }

  /** Drops what is buffered or requeued of one partition. */
  #purge(key: string): void {
    const kept = this.#buffer.slice(this.#head).filter((r) => partitionKey(r) !== key);
    this.#buffer = kept;
    this.#head = 0;
    this.#requeued = this.#requeued.filter((d) => partitionKey(d.record) !== key);
  }

  #purgeAll(): void {
    this.#buffer = [];
    this.#head = 0;
    this.#requeued = [];
  }

  /** Leaves the group once; never rejects (a consumer that fails to close is gone either way). */
  #leave(): Promise<void> {
    this.#leaving ??= (async () => {
      this.#host.forget(this);
      if (this.#window !== undefined) {
        this.#window.stop();
        await this.#window.flush();
      }
      await this.#consumer.close().catch(() => undefined);
    })();
    return this.#leaving;
  }

  #windowOwner() {
    const subscription = this;
    return {
      group: this.group,
      get consumer(): LinkConsumer {
        return subscription.#consumer;
      },
      rewind: async (to: ReadonlyMap<string, PartitionOffset>) => {
        const moves: Promise<void>[] = [];
        for (const [key, tp] of this.#held) {
          const target = to.get(key);
          // Fresh books first: settles of what was handed out since are dropped.
          this.#tracker.reset(key);
          this.#purge(key);
          if (target !== undefined)
            moves.push(this.#consumer.seek({ ...tp, offset: target.offset }));
        }
        await Promise.all(moves);
      },
      published: (raw: RawMessage) => this.#host.record(raw),
      failed: (error: unknown) => this.failed(error),
    };
  }

  /** The concrete offsets a position means for the partitions held, checked before anything moves. */
  async #targets(position: KafkaPosition): Promise<PartitionOffset[]> {
    const target = position.target;
    if (target.kind === "offset") {
      const tp = { topic: target.topic, partition: target.partition };
      if (!this.#source.topics.includes(target.topic)) {
        throw new RustStreamError(
          "unknown-position",
          `${position} is a position in "${target.topic}", which this subscription does not read (it reads ${this.#source.topics.map((t) => `"${t}"`).join(" and ")})`,
        );
      }
      if (!this.#held.has(partitionKey(tp))) {
        const count = await this.#admin.partitions(target.topic);
        if (count === undefined || target.partition >= count) {
          throw new RustStreamError(
            "unknown-position",
            `${position}: topic "${target.topic}" has no partition ${target.partition}`,
          );
        }
        throw new RustStreamError(
          "invalid-argument",
          `${position}: this member of group "${this.group}" does not hold partition ${target.partition} of "${target.topic}" (it holds ${this.#describeHeld()}); a seek moves only the partitions a member holds`,
        );
      }
      const { low, high } = await this.#admin.watermarks(target.topic, target.partition);
      if (target.offset < low || target.offset > high) {
        throw new RustStreamError(
          "unknown-position",
          `${position}: partition ${target.partition} of "${target.topic}" holds offsets ${low} to ${high - 1n} (deleted by retention, or never written): seek to a position a delivery reported`,
        );
      }
      return [{ ...tp, offset: target.offset }];
    }
    const targets: PartitionOffset[] = [];
    for (const p of this.#held.values()) {
      const { low, high } = await this.#admin.watermarks(p.topic, p.partition);
      const offset =
        target.kind === "beginning"
          ? low
          : target.kind === "end"
            ? high
            : ((await this.#admin.offsetForTime(p.topic, p.partition, target.ms)) ?? high);
      targets.push({ ...p, offset });
    }
    return targets;
  }

  #describeHeld(): string {
    const held = [...this.#held.values()];
    if (held.length === 0) return "none";
    return held.map((p) => `${p.topic}[${p.partition}]`).join(", ");
  }
}

/** Where a delivery's outputs belong (window.ts). */
function causeOf(delivery: KafkaDelivery): OutputCause {
  return {
    key: partitionKey(delivery.record),
    book: delivery.book,
    offset: delivery.record.offset,
  };
}

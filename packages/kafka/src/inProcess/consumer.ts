import type { Coordinator } from "@ruststream/core/broker";
import {
  type ConsumedRecord,
  type ConsumerHooks,
  type LinkConsumer,
  type PartitionOffset,
  partitionKey,
  type TopicPartition,
} from "../client/link.js";
import type { InProcessCluster } from "./cluster.js";
import type { GroupMember, InProcessGroup } from "./group.js";

const FETCH_MAX = 256;
let members = 0;

/**
 * A member of an in-process group. It "fetches" by handing the subscription what its partitions
 * hold past its positions, on a microtask after anything changes (an append, a resume, a seek, an
 * assignment). It also keeps the test's coordinator count: a record is counted when it becomes
 * available to this member (appended to, or already waiting in, a partition it holds) and released
 * once when the subscription settles it for good, or when the member gives the partition up.
 */
export class InProcessConsumer implements LinkConsumer, GroupMember {
  readonly id = ++members;
  readonly topics: readonly string[];
  readonly strategy: string;
  readonly #cluster: InProcessCluster;
  readonly #group: InProcessGroup;
  readonly #hooks: ConsumerHooks;
  readonly #coordinator: Coordinator;
  readonly #tracked: boolean;
  readonly #positions = new Map<string, { readonly tp: TopicPartition; offset: bigint }>();
  readonly #counted = new Map<string, Set<bigint>>();
  #paused = false;
  #closed = false;
  #scheduled = false;
  #unlisten: () => void = () => {};

  constructor(
    cluster: InProcessCluster,
    group: InProcessGroup,
    settings: {
      readonly topics: readonly string[];
      readonly strategy: string;
      readonly tracked: boolean;
    },
    hooks: ConsumerHooks,
    coordinator: Coordinator,
  ) {
    this.#cluster = cluster;
    this.#group = group;
    this.topics = settings.topics;
    this.strategy = settings.strategy;
    this.#tracked = settings.tracked;
    this.#hooks = hooks;
    this.#coordinator = coordinator;
  }

  async start(): Promise<void> {
    this.#unlisten = this.#cluster.listen((tp, record) => this.#appended(tp, record));
    await this.#group.join(this);
  }

  async committed(partitions: readonly TopicPartition[]): Promise<ReadonlyMap<string, bigint>> {
    const found = new Map<string, bigint>();
    for (const p of partitions) {
      const offset = this.#group.committed.get(partitionKey(p));
      if (offset !== undefined) found.set(partitionKey(p), offset);
    }
    return found;
  }

  async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    for (const o of offsets) this.#group.committed.set(partitionKey(o), o.offset);
  }

  store(offset: PartitionOffset): void {
    // The stand-in commits at once what a client would commit on its next interval.
    if (this.#positions.has(partitionKey(offset))) {
      this.#group.committed.set(partitionKey(offset), offset.offset);
    }
  }

  async seek(offset: PartitionOffset): Promise<void> {
    const key = partitionKey(offset);
    const position = this.#positions.get(key);
    if (position === undefined) return;
    position.offset = offset.offset;
    // What lies before the new position is no longer this member's to settle; what lies after it
    // is available again.
    const counted = this.#counted.get(key) ?? new Set<bigint>();
    let released = 0;
    for (const o of counted) {
      if (o < offset.offset) {
        counted.delete(o);
        released++;
      }
    }
    if (released > 0) this.#coordinator.consumed(released);
    this.#countFrom(position.tp, offset.offset);
    this.#schedule();
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#schedule();
  }

  readonly released = (record: TopicPartition & { readonly offset: bigint }): void => {
    if (this.#counted.get(partitionKey(record))?.delete(record.offset))
      this.#coordinator.consumed(1);
  };

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unlisten();
    await this.#group.leave(this);
    this.#releaseAll();
  }

  // GroupMember

  async revokeAll(): Promise<void> {
    const held = [...this.#positions.values()].map((p) => p.tp);
    if (held.length === 0) return;
    if (!this.#closed) await this.#hooks.revoked(held);
    this.#positions.clear();
    this.#releaseAll();
  }

  async assign(partitions: readonly TopicPartition[]): Promise<void> {
    if (this.#closed) return;
    const starts = await this.#hooks.assigned(partitions);
    const at = new Map(starts.map((s) => [partitionKey(s), s.offset]));
    for (const tp of partitions) {
      const key = partitionKey(tp);
      const offset = at.get(key) ?? this.#group.committed.get(key) ?? 0n;
      this.#positions.set(key, { tp, offset });
      this.#countFrom(tp, offset);
    }
    this.#schedule();
  }

  // Fetching and counting.

  #appended(tp: TopicPartition, record: ConsumedRecord | undefined): void {
    const key = partitionKey(tp);
    const position = this.#positions.get(key);
    if (this.#closed || position === undefined) return;
    if (record !== undefined) {
      if (record.offset < position.offset) return;
      this.#count(key, record.offset);
    }
    this.#schedule();
  }

  /**
   * Counts every record of a partition from `offset` on that this member will be handed and has not
   * counted already: never a transaction marker or an aborted record, which no delivery settles.
   */
  #countFrom(tp: TopicPartition, offset: bigint): void {
    for (const o of this.#cluster.readableOffsets(tp.topic, tp.partition, offset)) {
      this.#count(partitionKey(tp), o);
    }
  }

  #count(key: string, offset: bigint): void {
    let counted = this.#counted.get(key);
    if (counted === undefined) {
      counted = new Set();
      this.#counted.set(key, counted);
    }
    if (counted.has(offset)) return;
    counted.add(offset);
    this.#coordinator.enqueued(1);
  }

  #releaseAll(): void {
    let total = 0;
    for (const counted of this.#counted.values()) total += counted.size;
    this.#counted.clear();
    if (total > 0) this.#coordinator.consumed(total);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#fetch();
    });
  }

  #fetch(): void {
    if (this.#closed || this.#paused) return;
    const batch: ConsumedRecord[] = [];
    for (const position of this.#positions.values()) {
      const { records, next } = this.#cluster.read(
        position.tp.topic,
        position.tp.partition,
        position.offset,
        FETCH_MAX - batch.length,
      );
      // Past markers and aborted records too, as a fetch moves the position over them.
      if (next === position.offset) continue;
      position.offset = next;
      batch.push(...records);
      // Under auto the client commits what it handed over.
      if (!this.#tracked) {
        this.#group.committed.set(partitionKey(position.tp), position.offset);
      }
      if (batch.length >= FETCH_MAX) break;
    }
    if (batch.length === 0) return;
    this.#hooks.records(batch);
    this.#schedule();
  }
}

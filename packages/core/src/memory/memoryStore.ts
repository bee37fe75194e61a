import { type Coordinator, noCoordinator } from "../broker/inProcess.js";
import type { PublishedLog } from "../broker/testableConnection.js";
import type { Clock, ClockTimer } from "../clock.js";
import type { ReadonlyHeaderMap } from "../headerMap.js";
import type { RawMessage } from "../message.js";
import { InflightSequences } from "./inflightSequences.js";

/** A message as a memory topic keeps it. */
export interface StoredMessage extends RawMessage {
  readonly sequence: bigint;
  readonly headers: ReadonlyHeaderMap;
}

/** Anything that waits on a group for its next message. */
export interface GroupWaiter {
  wake(sequence: bigint): void;
}

/**
 * The server side of a memory broker: its topics, their retained messages and their groups. It
 * outlives connections, as a server outlives its clients.
 */
export class MemoryStore {
  readonly topics = new Map<string, MemoryTopicLog>();
  readonly retain: number;
  clock: Clock;
  coordinator: Coordinator = noCoordinator;
  /**
   * What the in-process connections record into, shared as a server's log would be: every publish,
   * injection and broker-moved dead letter, per name, for `published()`.
   */
  publishedLog: PublishedLog | undefined;
  openConnections = 0;

  constructor(retain: number, clock: Clock) {
    this.retain = retain;
    this.clock = clock;
  }

  topic(name: string): MemoryTopicLog {
    let topic = this.topics.get(name);
    if (topic === undefined) {
      topic = new MemoryTopicLog(this, name);
      this.topics.set(name, topic);
    }
    return topic;
  }

  append(message: RawMessage): bigint {
    return this.topic(message.name).append(message);
  }

  /** With no client left, delayed redeliveries become due at once so no timer outlives the broker. */
  releaseTimers(): void {
    for (const topic of this.topics.values()) {
      for (const group of topic.groups.values()) group.flushDelayed();
    }
  }
}

/** One topic: an append-only log trimmed from the front. */
export class MemoryTopicLog {
  readonly store: MemoryStore;
  readonly name: string;
  readonly groups = new Map<string, MemoryGroup>();
  #entries: StoredMessage[] = [];
  #head = 0;
  /** Sequence of the oldest retained message. */
  base = 0n;
  /** Sequence the next message gets. */
  next = 0n;

  constructor(store: MemoryStore, name: string) {
    this.store = store;
    this.name = name;
  }

  get(sequence: bigint): StoredMessage | undefined {
    if (sequence < this.base || sequence >= this.next) return undefined;
    return this.#entries[this.#head + Number(sequence - this.base)];
  }

  append(message: RawMessage): bigint {
    const sequence = this.next++;
    this.#entries.push({ ...message, sequence });
    for (const group of this.groups.values()) group.arrived(sequence);
    this.trim();
    return sequence;
  }

  group(key: string, start: "start" | "end", anonymous: boolean): MemoryGroup {
    let group = this.groups.get(key);
    if (group === undefined) {
      group = new MemoryGroup(this, key, start === "start" ? this.base : this.next, anonymous);
      this.groups.set(key, group);
    }
    return group;
  }

  /**
   * Drops messages every group is done with, beyond the `retain` newest. A group that lags keeps
   * its messages: memory never loses what a group has not settled.
   */
  trim(): void {
    const size = this.next - this.base;
    if (size <= BigInt(this.store.retain)) return;
    let floor = this.next - BigInt(this.store.retain);
    for (const group of this.groups.values()) {
      const f = group.floor();
      if (f < floor) floor = f;
    }
    if (floor <= this.base) return;
    this.#head += Number(floor - this.base);
    this.base = floor;
    // Compact now and then instead of shifting on every eviction.
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}

function insertSorted(list: bigint[], value: bigint): void {
  let i = list.length;
  while (i > 0 && list[i - 1]! > value) i--;
  list.splice(i, 0, value);
}

/**
 * A consumer group on a topic: the cursor of the next new message, the requeued ones waiting to
 * come back (oldest first), and what is out with a subscription. Settlement is precise per message,
 * so memory never redelivers an acked message.
 */
export class MemoryGroup {
  readonly topic: MemoryTopicLog;
  readonly key: string;
  readonly anonymous: boolean;
  cursor: bigint;
  /** Bumped by a seek; settles of deliveries from an older generation change nothing. */
  generation = 0;
  members = 0;
  readonly #redeliver: bigint[] = [];
  readonly #inflight = new InflightSequences();
  readonly #attempts = new Map<bigint, number>();
  readonly #counted = new Set<bigint>();
  readonly #delayed = new Map<bigint, ClockTimer>();
  readonly #waiters: GroupWaiter[] = [];

  constructor(topic: MemoryTopicLog, key: string, cursor: bigint, anonymous: boolean) {
    this.topic = topic;
    this.key = key;
    this.cursor = cursor;
    this.anonymous = anonymous;
  }

  attempts(sequence: bigint): number {
    return this.#attempts.get(sequence) ?? 0;
  }

  /** The oldest sequence this group still needs. */
  floor(): bigint {
    let floor = this.cursor;
    const first = this.#redeliver[0];
    if (first !== undefined && first < floor) floor = first;
    const out = this.#inflight.oldest();
    if (out !== undefined && out < floor) floor = out;
    for (const s of this.#delayed.keys()) if (s < floor) floor = s;
    return floor;
  }

  join(): void {
    if (this.members++ === 0) {
      for (const s of this.#redeliver) this.#count(s);
      for (let s = this.cursor; s < this.topic.next; s++) this.#count(s);
    }
  }

  leave(): void {
    if (--this.members > 0) return;
    // Out-of-hand messages stay counted until settled; waiting ones no longer have a consumer.
    for (const s of this.#redeliver) this.#release(s);
    for (let s = this.cursor; s < this.topic.next; s++) this.#release(s);
    if (this.anonymous) this.topic.groups.delete(this.key);
  }

  /** Takes the next message for a member, or `undefined` when none is waiting. */
  take(): bigint | undefined {
    let sequence = this.#redeliver.shift();
    if (sequence === undefined) {
      if (this.cursor >= this.topic.next) return undefined;
      sequence = this.cursor++;
    }
    this.#inflight.add(sequence);
    this.#attempts.set(sequence, (this.#attempts.get(sequence) ?? 0) + 1);
    return sequence;
  }

  wait(waiter: GroupWaiter): void {
    this.#waiters.push(waiter);
  }

  unwait(waiter: GroupWaiter): void {
    const i = this.#waiters.indexOf(waiter);
    if (i >= 0) this.#waiters.splice(i, 1);
  }

  arrived(sequence: bigint): void {
    if (this.members > 0) this.#count(sequence);
    this.#pump();
  }

  done(sequence: bigint, generation: number): void {
    if (generation !== this.generation || !this.#inflight.delete(sequence)) return;
    this.#attempts.delete(sequence);
    this.#release(sequence);
    this.topic.trim();
  }

  requeue(sequence: bigint, generation: number): void {
    if (generation !== this.generation || !this.#inflight.delete(sequence)) return;
    insertSorted(this.#redeliver, sequence);
    if (this.members === 0) this.#release(sequence);
    this.#pump();
  }

  requeueAfter(sequence: bigint, generation: number, ms: number): void {
    if (generation !== this.generation || !this.#inflight.delete(sequence)) return;
    this.#release(sequence);
    const timer = this.topic.store.clock.setTimer(ms, () => {
      this.#delayed.delete(sequence);
      this.#back(sequence);
    });
    this.#delayed.set(sequence, timer);
  }

  flushDelayed(): void {
    for (const [sequence, timer] of [...this.#delayed]) {
      timer.cancel();
      this.#delayed.delete(sequence);
      this.#back(sequence);
    }
  }

  /** Moves the group: the next message taken is `sequence`, then the ones after it. */
  seek(sequence: bigint): void {
    this.generation++;
    if (this.#counted.size > 0) this.topic.store.coordinator.consumed(this.#counted.size);
    this.#counted.clear();
    this.#inflight.clear();
    this.#redeliver.length = 0;
    this.#attempts.clear();
    for (const timer of this.#delayed.values()) timer.cancel();
    this.#delayed.clear();
    this.cursor = sequence;
    if (this.members > 0) {
      for (let s = this.cursor; s < this.topic.next; s++) this.#count(s);
    }
    this.#pump();
  }

  #back(sequence: bigint): void {
    insertSorted(this.#redeliver, sequence);
    if (this.members > 0) this.#count(sequence);
    this.#pump();
  }

  #pump(): void {
    while (this.#waiters.length > 0) {
      const sequence = this.take();
      if (sequence === undefined) return;
      this.#waiters.shift()!.wake(sequence);
    }
  }

  #count(sequence: bigint): void {
    if (this.#counted.has(sequence)) return;
    this.#counted.add(sequence);
    this.topic.store.coordinator.enqueued();
  }

  #release(sequence: bigint): void {
    if (this.#counted.delete(sequence)) this.topic.store.coordinator.consumed();
  }
}

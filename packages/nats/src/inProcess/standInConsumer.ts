import { type Clock, type ClockTimer, RustStreamError } from "@ruststream/core";
import type { Coordinator } from "@ruststream/core/broker";
import type { ConsumerCounts, PullRequest, PullSink, Stored } from "../client/link.js";
import { headerMapOf } from "../headerValues.js";
import type { ConsumerSettings, DeliverPolicy } from "../sources.js";
import { type PinnedGroupRef, unpinRefused } from "../unpin.js";
import { type PullClient, StandInPriorityGroup } from "./standInPriority.js";
import type { StandInStream, StoredEntry } from "./standInStream.js";
import { subjectMatches } from "./subjects.js";

/** A client's pulls: handed messages while its sink has room, parked while it has none. */
interface Waiting {
  readonly sink: PullSink;
  /** Whose pulls these are, for the consumer's priority group. */
  readonly client: PullClient;
  readonly finish: (error?: Error) => void;
  ended: boolean;
}

interface Pending {
  readonly deliveries: number;
  timer: ClockTimer;
}

/**
 * A pull consumer as the server runs one, for what the package uses: explicit acks, the ack wait
 * (or the backoff list) after which an unsettled message is delivered again, `max_ack_pending`,
 * `max_deliver`, the deliver policies, `nak` with and without a delay, `term`, `working` (the ack
 * wait starts again) and the delivery count; or, for an ordered consumer, ack policy none (each
 * message delivered once, in stream order, nothing pending). It counts for the test's coordinator: a message is
 * counted once it is available to the consumer and released once settled for good; a requeue stays
 * counted, a delayed one is released at the `nak` and counted again when due. With a priority
 * group, the group chooses which waiting pull is served (`StandInPriorityGroup`).
 */
export class StandInConsumer {
  readonly name: string;
  readonly stream: StandInStream;
  readonly durable: boolean;
  /**
   * A push consumer's (a subscription gave `push`): its clients' pulls are served as a pull
   * consumer's, as the stand-in hands a client what it has up to max_ack_pending anyway; the kind
   * is kept so a binding of the other kind is refused as on the server.
   */
  readonly push: boolean;
  readonly ackWaitMs: number;
  /** Ack policy none (an ordered consumer's): a message delivered is done with at the server. */
  readonly ordered: boolean;
  coordinator: Coordinator;
  readonly #subjects: readonly string[];
  readonly #settings: ConsumerSettings;
  readonly #clock: Clock;
  /** The next sequence not yet considered for a first delivery. */
  #cursor: bigint;
  /** With `last-per-subject`: the stored sequences it starts with; later ones all follow. */
  readonly #startSet: Set<bigint> | undefined;
  readonly #startedAt: bigint;
  readonly #deliveries = new Map<bigint, number>();
  readonly #pending = new Map<bigint, Pending>();
  readonly #redeliver: bigint[] = [];
  readonly #delayed = new Map<bigint, ClockTimer>();
  /** The pulls with room, in the order they asked. */
  readonly #waiting: Waiting[] = [];
  /** Every pull not ended, parked ones too. */
  readonly #pulls = new Set<Waiting>();
  /** What is counted, and the coordinator that counted it (a later client may bind to a durable). */
  readonly #counted = new Map<bigint, Coordinator>();
  /** The consumer's priority group, which chooses between its clients' pulls. */
  readonly #group: StandInPriorityGroup | undefined;
  #deleted = false;

  constructor(
    options: {
      readonly name: string;
      readonly stream: StandInStream;
      readonly durable: boolean;
      readonly ordered: boolean;
      readonly subjects: readonly string[];
      readonly settings: ConsumerSettings;
      readonly startAt: DeliverPolicy;
    },
    clock: Clock,
    coordinator: Coordinator,
  ) {
    this.name = options.name;
    this.push = options.settings.push !== undefined;
    this.ackWaitMs = options.settings.ackWaitMs;
    this.stream = options.stream;
    this.durable = options.durable;
    this.ordered = options.ordered;
    this.#subjects = options.subjects;
    this.#settings = options.settings;
    this.#clock = clock;
    this.coordinator = coordinator;
    const { startAt } = options;
    const stream = options.stream;
    const next = stream.last + 1n;
    if (startAt === "all") this.#cursor = stream.first === 0n ? 1n : stream.first;
    else if (startAt === "new") this.#cursor = next;
    else if (startAt === "last") {
      const last = [...stream.entries].reverse().find((e) => this.#matches(e.subject));
      this.#cursor = last?.sequence ?? next;
    } else if (startAt === "last-per-subject") {
      const bySubject = new Map<string, bigint>();
      for (const e of stream.entries)
        if (this.#matches(e.subject)) bySubject.set(e.subject, e.sequence);
      this.#startSet = new Set(bySubject.values());
      this.#cursor = stream.first === 0n ? 1n : stream.first;
    } else if ("sequence" in startAt) this.#cursor = BigInt(startAt.sequence);
    else {
      const at = startAt.time.getTime();
      this.#cursor = stream.entries.find((e) => e.wallTime >= at)?.sequence ?? next;
    }
    this.#startedAt = next;
    const priority = options.settings.priority;
    this.#group =
      priority === undefined
        ? undefined
        : new StandInPriorityGroup(priority, clock, () => this.#dispatch());
    for (const e of stream.entries) if (this.#available(e)) this.#count(e.sequence);
  }

  /** A new entry of the stream: counted if this consumer will deliver it, and handed to a waiting pull. */
  stored(entry: StoredEntry): void {
    if (this.#deleted || !this.#available(entry)) return;
    this.#count(entry.sequence);
    this.#dispatch();
  }

  /** The stream dropped an entry (a KV key's history past its limit): not to be delivered. */
  removed(sequence: bigint): void {
    if (sequence >= this.#cursor) this.#uncount(sequence);
  }

  /**
   * A client's pulls, as the client's consume() keeps asking the server: messages go to `sink`
   * while it has room, until stopped. A request's size and wait at the server are the client's
   * business (it asks again before one runs out or expires), so the stand-in needs neither.
   */
  pull(sink: PullSink, client: PullClient): PullRequest {
    if (this.#deleted) {
      // As the server answers a pull on a consumer it no longer has.
      return { done: Promise.reject(this.#gone()), stop: () => {} };
    }
    let finish!: (error?: Error) => void;
    const done = new Promise<void>((resolve, reject) => {
      finish = (error) => (error === undefined ? resolve() : reject(error));
    });
    const waiting: Waiting = { sink, client, finish, ended: false };
    this.#pulls.add(waiting);
    this.#waiting.push(waiting);
    this.#pullingChanged(client);
    this.#dispatch();
    return { done, stop: () => this.#endPull(waiting) };
  }

  /**
   * Its counts as the server's consumer info gives them: `num_pending` the messages not delivered
   * yet; `num_ack_pending` those delivered and not acknowledged, which the server keeps pending
   * through a `nak` (with a delay or not) and an ack wait run out until it delivers them again
   * (none for an ordered consumer, which takes no acks).
   */
  counts(): ConsumerCounts {
    return {
      undelivered: this.#undelivered(),
      unacknowledged: this.#unacknowledged(),
    };
  }

  /** The consumer's priority group as its settings give it (every client's must agree). */
  get priority(): ConsumerSettings["priority"] {
    return this.#settings.priority;
  }

  /** `client`'s link lets go of the consumer: a pin it holds is given up at once. */
  letGo(client: PullClient): void {
    this.#group?.letGo(client);
  }

  /**
   * An unpin of its priority group, refused as the server's is (a group it lacks, one not pinned);
   * whether a client held the pin.
   */
  unpin(ref: PinnedGroupRef): boolean {
    const priority = this.#settings.priority;
    if (priority === undefined || priority.group !== ref.group)
      throw unpinRefused.noGroup(ref, priority === undefined ? [] : [priority.group]);
    // The server's names of the policies, but for the pinned one, are the package's.
    if (priority.policy !== "pinned") throw unpinRefused.notPinned(ref, priority.policy);
    return this.#group?.unpin() ?? false;
  }

  /** Gone (an ephemeral's close, a durable replaced): what it counted is released. */
  delete(): void {
    this.#deleted = true;
    this.#group?.close();
    // The server ends a deleted consumer's pulls with an error the client's consume() stops on.
    for (const w of [...this.#pulls]) this.#endPull(w, this.#gone());
    for (const p of this.#pending.values()) p.timer.cancel();
    for (const t of this.#delayed.values()) t.cancel();
    this.#pending.clear();
    this.#delayed.clear();
    for (const counted of this.#counted.values()) counted.consumed();
    this.#counted.clear();
  }

  #matches(subject: string): boolean {
    return this.#subjects.some((pattern) => subjectMatches(pattern, subject));
  }

  /** Whether this consumer will deliver `entry` for the first time (not yet reached). */
  #available(entry: StoredEntry): boolean {
    return entry.sequence >= this.#cursor && this.#wanted(entry);
  }

  /** Whether `entry` is one this consumer delivers: its filter, and where it started. */
  #wanted(entry: StoredEntry): boolean {
    if (!this.#matches(entry.subject)) return false;
    return (
      this.#startSet === undefined ||
      entry.sequence >= this.#startedAt ||
      this.#startSet.has(entry.sequence)
    );
  }

  #count(sequence: bigint): void {
    if (this.#counted.has(sequence)) return;
    this.#counted.set(sequence, this.coordinator);
    this.coordinator.enqueued();
  }

  /** Released for good: no longer counted. */
  #uncount(sequence: bigint): void {
    const counted = this.#counted.get(sequence);
    if (counted === undefined) return;
    this.#counted.delete(sequence);
    counted.consumed();
  }

  #release(sequence: bigint): void {
    this.#deliveries.delete(sequence);
    this.#uncount(sequence);
  }

  #gone(): RustStreamError {
    return new RustStreamError("broker-failure", `consumer "${this.name}" not found`);
  }

  #endPull(waiting: Waiting, error?: Error): void {
    if (waiting.ended) return;
    waiting.ended = true;
    this.#pulls.delete(waiting);
    const i = this.#waiting.indexOf(waiting);
    if (i >= 0) this.#waiting.splice(i, 1);
    this.#pullingChanged(waiting.client);
    waiting.finish(error);
  }

  /** Tells the group whether `client` still has a pull waiting with room (a pin's TTL runs without). */
  #pullingChanged(client: PullClient): void {
    if (this.#deleted) return;
    this.#group?.pulling(
      client,
      this.#waiting.some((w) => w.client === client),
    );
  }

  /** A pull whose sink has no room waits apart until it has, then takes its turn again. */
  #park(waiting: Waiting, room: Promise<void>): void {
    const i = this.#waiting.indexOf(waiting);
    if (i >= 0) this.#waiting.splice(i, 1);
    this.#pullingChanged(waiting.client);
    void room.then(() => {
      if (waiting.ended) return;
      this.#waiting.push(waiting);
      this.#pullingChanged(waiting.client);
      this.#dispatch();
    });
  }

  /** The next sequence to deliver: a redelivery first, else the next new one; `undefined` if none. */
  #next(): StoredEntry | undefined {
    while (this.#redeliver.length > 0) {
      const sequence = this.#redeliver.shift() as bigint;
      const entry = this.stream.entryAt(sequence);
      if (entry !== undefined) return entry;
      this.#release(sequence);
    }
    while (this.#cursor <= this.stream.last) {
      const entry = this.stream.entryAt(this.#cursor);
      this.#cursor++;
      if (entry !== undefined && this.#wanted(entry)) return entry;
    }
    return undefined;
  }

  #dispatch(): void {
    if (this.#deleted) return;
    const maxPending = this.#settings.maxAckPending ?? 1000;
    while (this.#waiting.length > 0) {
      // As the server's max_ack_pending: it holds back new messages only (one to deliver again is
      // pending already), and a message given back with a nak stays pending until delivered again.
      if (this.#redeliver.length === 0 && this.#unacknowledged() >= maxPending) return;
      const entry = this.#next();
      if (entry === undefined) return;
      const waiting = this.#chosen();
      if (waiting === undefined) {
        this.#putBack(entry);
        return;
      }
      this.#deliver(waiting, entry);
      const room = waiting.ended ? undefined : waiting.sink.room();
      if (room !== undefined) this.#park(waiting, room);
      else if (!waiting.ended) this.#takeTurn(waiting);
    }
  }

  /** Served and still with room: last in line, as the server serves its waiting pulls in turn. */
  #takeTurn(waiting: Waiting): void {
    const i = this.#waiting.indexOf(waiting);
    if (i < 0 || i === this.#waiting.length - 1) return;
    this.#waiting.splice(i, 1);
    this.#waiting.push(waiting);
  }

  /** The pull served next: the group's choice, else the first to ask. */
  #chosen(): Waiting | undefined {
    if (this.#group === undefined) return this.#waiting[0];
    return this.#group.choose(this.#waiting, {
      // The server's num_pending plus one as it chooses: the new message #next took out, or one
      // more past a redelivery (which was never among the undelivered).
      undelivered: () => this.#undelivered() + 1,
      ackPending: this.#unacknowledged(),
    });
  }

  /** An entry taken by #next that no pull is served now: first again, as it was. */
  #putBack(entry: StoredEntry): void {
    if (this.#deliveries.has(entry.sequence)) this.#redeliver.unshift(entry.sequence);
    else this.#cursor = entry.sequence;
  }

  /** Messages this consumer has not delivered yet (its `num_pending`). */
  #undelivered(): number {
    let count = 0;
    for (const entry of this.stream.entries)
      if (entry.sequence >= this.#cursor && this.#wanted(entry)) count++;
    return count;
  }

  /**
   * Delivered and not acknowledged (its `num_ack_pending`): in a client, or given back with a `nak`
   * or an ack wait run out and not delivered again yet. None for an ordered consumer.
   */
  #unacknowledged(): number {
    return this.#pending.size + this.#redeliver.length + this.#delayed.size;
  }

  #ackWait(deliveries: number): number {
    const backoff = this.#settings.backoffMs;
    if (backoff === undefined) return this.#settings.ackWaitMs;
    return backoff[Math.min(deliveries - 1, backoff.length - 1)] as number;
  }

  #deliver(waiting: Waiting, entry: StoredEntry): void {
    if (this.ordered) {
      waiting.sink.arrived(this.#unacked(entry));
      return;
    }
    const sequence = entry.sequence;
    const deliveries = (this.#deliveries.get(sequence) ?? 0) + 1;
    this.#deliveries.set(sequence, deliveries);
    const pending: Pending = {
      deliveries,
      timer: this.#clock.setTimer(this.#ackWait(deliveries), () =>
        this.#expired(sequence, pending),
      ),
    };
    this.#pending.set(sequence, pending);
    waiting.sink.arrived(this.#message(entry, pending));
  }

  /** The ack wait ran out: delivered again, unless `max_deliver` deliveries were made. */
  #expired(sequence: bigint, pending: Pending): void {
    if (this.#pending.get(sequence) !== pending) return;
    this.#pending.delete(sequence);
    this.#again(sequence, pending.deliveries);
  }

  #again(sequence: bigint, deliveries: number): void {
    const max = this.#settings.maxDeliver;
    if (max !== undefined && deliveries >= max) {
      this.#release(sequence);
      return;
    }
    this.#redeliver.push(sequence);
    this.#redeliver.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.#dispatch();
  }

  /** Settles `pending` if it is still the message's current delivery; the server ignores a stale one. */
  #settle(sequence: bigint, pending: Pending): boolean {
    if (this.#deleted || this.#pending.get(sequence) !== pending) return false;
    this.#pending.delete(sequence);
    pending.timer.cancel();
    return true;
  }

  /** What every message of this consumer carries, whatever its settlement. */
  #fields(entry: StoredEntry, deliveries: number) {
    return {
      subject: entry.subject,
      payload: entry.payload,
      headers: headerMapOf(entry.headers),
      reply: undefined,
      status: undefined,
      decodeError: undefined,
      stream: this.stream.name,
      consumer: this.name,
      streamSequence: entry.sequence,
      deliveryCount: deliveries,
      storedAt: entry.time,
    };
  }

  /**
   * A message of a consumer that takes no acks: delivered once, never again. The server holds
   * nothing for it; the test's harness counts it until the delivery's first settle, which calls
   * one of its verbs (they send nothing on a real connection).
   */
  #unacked(entry: StoredEntry): Stored {
    const done = () => this.#release(entry.sequence);
    return {
      ...this.#fields(entry, 1),
      ack: done,
      ackConfirmed: async () => done(),
      nak: done,
      term: done,
      working: () => {},
    };
  }

  #message(entry: StoredEntry, pending: Pending): Stored {
    const sequence = entry.sequence;
    const ack = () => {
      if (this.#settle(sequence, pending)) {
        this.#release(sequence);
        this.#dispatch();
      }
    };
    return {
      ...this.#fields(entry, pending.deliveries),
      ack,
      ackConfirmed: async () => ack(),
      nak: (delayMs) => {
        if (!this.#settle(sequence, pending)) return;
        if (delayMs === undefined || delayMs <= 0) {
          this.#again(sequence, pending.deliveries);
          return;
        }
        const max = this.#settings.maxDeliver;
        if (max !== undefined && pending.deliveries >= max) {
          this.#release(sequence);
          return;
        }
        // Released at the nak, counted again when due: a harness waits for due work only.
        this.#uncount(sequence);
        this.#delayed.set(
          sequence,
          this.#clock.setTimer(delayMs, () => {
            this.#delayed.delete(sequence);
            this.#count(sequence);
            this.#again(sequence, pending.deliveries);
          }),
        );
      },
      term: () => {
        if (!this.#settle(sequence, pending)) return;
        this.#release(sequence);
        this.#dispatch();
      },
      working: () => {
        if (this.#deleted || this.#pending.get(sequence) !== pending) return;
        pending.timer.cancel();
        pending.timer = this.#clock.setTimer(this.#ackWait(pending.deliveries), () =>
          this.#expired(sequence, pending),
        );
      },
    };
  }
}

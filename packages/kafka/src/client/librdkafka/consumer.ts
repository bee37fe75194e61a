import { FirstAssignment } from "../assignmentWait.js";
import {
  type ConsumedRecord,
  type ConsumerHooks,
  type LinkConsumer,
  type PartitionOffset,
  partitionKey,
  type TopicPartition,
} from "../link.js";
import { CONSUME_MAX, CONSUME_WAIT_MS } from "./pull.js";
import {
  call,
  callVoid,
  type RdConsumer,
  type RdError,
  type RdMessage,
  type RdTopicPartition,
} from "./rdkafka.js";

const ASSIGN = -175;
const REVOKE = -174;
const TIMEOUT_MS = 10_000;

const empty = new Uint8Array(0);

/** Plain bytes: a view of the client's Buffer, never a Buffer (which compares unequal to bytes). */
function bytes(value: Buffer | string | null | undefined): Uint8Array {
  if (value === null || value === undefined) return empty;
  const buffer = typeof value === "string" ? Buffer.from(value) : value;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** Shared by every record without headers: most records have none, and each would get its own. */
const noHeaders: ReadonlyArray<readonly [string, Uint8Array]> = Object.freeze([]);

/** `topic`: the assignment's own string, so every record of a partition shares one (and its hash). */
export function recordOf(message: RdMessage, topic: string): ConsumedRecord {
  let headers: ReadonlyArray<readonly [string, Uint8Array]> = noHeaders;
  const raw = message.headers;
  if (raw !== undefined && raw !== null && raw.length > 0) {
    const list: Array<readonly [string, Uint8Array]> = [];
    for (const header of raw) {
      for (const [name, value] of Object.entries(header)) list.push([name, bytes(value)]);
    }
    headers = list;
  }
  return {
    topic,
    partition: message.partition,
    offset: BigInt(message.offset),
    key: message.key === null || message.key === undefined ? undefined : bytes(message.key),
    value: bytes(message.value),
    headers,
    timestamp: message.timestamp ?? 0,
  };
}

/**
 * One librdkafka consumer in a group. A loop pulls with `consume(n)` for as long as the consumer
 * lives (paused partitions return nothing, but the poll still serves rebalances), and the group's
 * assignments go through a rebalance callback that asks the subscription where each partition
 * starts before assigning it with those offsets. A seek raises a barrier: records of the partition
 * from a `consume` call that started before it are dropped (they are from before the seek), and
 * no `consume` runs while the seek does, so none fetched before a seek is handed over after it.
 * Assignments need no barrier: librdkafka hands out nothing of a partition it has not been told to
 * assign, and purges what it fetched for one it unassigns.
 */
export class RdkafkaConsumer implements LinkConsumer {
  readonly #consumer: RdConsumer;
  readonly #topics: readonly string[];
  readonly #hooks: ConsumerHooks;
  readonly #tracked: boolean;
  /** Positions stored for commit, by partition: committed explicitly when a partition goes. */
  readonly #stored = new Map<string, PartitionOffset>();
  /** Partitions whose stored position moved since it was last handed to librdkafka. */
  readonly #unstored = new Set<string>();
  #storeScheduled = false;
  readonly #assigned = new Map<string, TopicPartition>();
  readonly #movedAt = new Map<string, number>();
  #barrier = 0;
  #paused = false;
  /**
   * Partitions paused in librdkafka and not resumed since, assigned or not: librdkafka keeps a
   * partition's pause across unassign and assign (the flag is the partition's, not the
   * assignment's), so one paused, revoked, and assigned again after the consumer resumed would stay
   * paused for good, never fetched while this member holds it in the group.
   */
  readonly #pausedInClient = new Map<string, TopicPartition>();
  #running = false;
  #closing = false;
  #loop: Promise<void> | undefined;
  readonly #firstAssignment: FirstAssignment;
  #rebalancing: Promise<void> = Promise.resolve();
  #consuming: Promise<RdMessage[]> | undefined;
  #seeking = 0;
  #seeksDone: (() => void) | undefined;

  constructor(
    factory: (rebalance: (error: RdError, partitions: RdTopicPartition[]) => void) => RdConsumer,
    group: string,
    topics: readonly string[],
    hooks: ConsumerHooks,
    tracked: boolean,
  ) {
    this.#topics = topics;
    this.#firstAssignment = new FirstAssignment(group, topics);
    this.#hooks = hooks;
    this.#tracked = tracked;
    const self = this;
    this.#consumer = factory(function onRebalance(error, partitions) {
      self.#onRebalance(error, partitions);
    });
  }

  /** The client itself, for a transaction that commits this member's positions (its group metadata). */
  get client(): RdConsumer {
    return this.#consumer;
  }

  async start(): Promise<void> {
    await call((cb) => this.#consumer.connect({ timeout: TIMEOUT_MS }, cb));
    this.#consumer.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
    this.#consumer.setDefaultIsTimeoutOnlyForFirstMessage(true);
    this.#consumer.subscribe([...this.#topics]);
    this.#running = true;
    this.#loop = this.#run();
    await this.#firstAssignment.wait();
  }

  /**
   * Asked again, for as long as the consumer is open, while the answer is one a cluster gives for a
   * while and then stops giving: read_committed makes librdkafka ask for stable offsets only
   * (OffsetFetch's require_stable), and a coordinator answers UNSTABLE_OFFSET_COMMIT, which
   * librdkafka retries until the call's timeout, for as long as a transaction holding the group's
   * offsets of the partition is open. A member SIGKILLed mid-window leaves one open until its
   * restart fences it, or `transaction.timeout.ms` (60 s by default) aborts it; a coordinator
   * moving after a node's death answers nothing for a while too. Failing there failed the
   * subscription, and so the app ("Local: Timed out"; the chaos suite's `kafka-transactional`).
   */
  async committed(partitions: readonly TopicPartition[]): Promise<ReadonlyMap<string, bigint>> {
    const asked = partitions.map((p) => ({ topic: p.topic, partition: p.partition }));
    let answer: RdTopicPartition[];
    for (;;) {
      try {
        answer = await call<RdTopicPartition[]>((cb) =>
          this.#consumer.committed(asked, TIMEOUT_MS, cb),
        );
        break;
      } catch (error) {
        if (this.#closing || !passing(error as RdError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const found = new Map<string, bigint>();
    for (const p of answer) {
      if (p.offset !== undefined && p.offset >= 0) found.set(partitionKey(p), BigInt(p.offset));
    }
    return found;
  }

  async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    if (offsets.length === 0) return;
    await callVoid((cb) =>
      this.#consumer.commitCb(
        offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: Number(o.offset) })),
        cb,
      ),
    );
  }

  store(offset: PartitionOffset): void {
    const key = partitionKey(offset);
    if (!this.#assigned.has(key)) return;
    this.#stored.set(key, offset);
    this.#unstored.add(key);
    // Handed to librdkafka once per turn of the event loop, the latest position of each partition
    // that moved: a native call per settle was the largest single cost of a tracked consumer, and
    // librdkafka commits what is stored only every auto.commit.interval.ms (or at a revocation or
    // close, which commit `#stored` themselves).
    if (!this.#storeScheduled) {
      this.#storeScheduled = true;
      setImmediate(() => this.#storeMoved());
    }
  }

  #storeMoved(): void {
    this.#storeScheduled = false;
    const offsets: RdTopicPartition[] = [];
    for (const key of this.#unstored) {
      const stored = this.#stored.get(key);
      // Revoked since: a position of a partition this consumer lost is not its to commit.
      if (stored === undefined || !this.#assigned.has(key)) continue;
      offsets.push({ ...plain(stored), offset: Number(stored.offset) });
    }
    this.#unstored.clear();
    if (offsets.length === 0) return;
    try {
      this.#consumer.offsetsStore(offsets);
    } catch {
      // One of them is no longer assigned (or the consumer is closing): store the others alone.
      for (const one of offsets) this.#ignore(() => this.#consumer.offsetsStore([one]));
    }
  }

  async seek(offset: PartitionOffset): Promise<void> {
    const key = partitionKey(offset);
    // Raised at once: records of a consume already in flight are from before the seek.
    this.#move(key);
    const target = {
      topic: offset.topic,
      partition: offset.partition,
      offset: Number(offset.offset),
    };
    // No consume runs while a seek does: one that returned records from the new position before
    // the seek's own answer came back could not tell them from older ones.
    this.#seeking++;
    try {
      await this.#consuming?.catch(() => undefined);
      // A partition assigned a moment ago may not be fetching yet, and librdkafka refuses to seek
      // it ("erroneous state") until it is: try again briefly before giving up.
      for (let attempt = 0; ; attempt++) {
        try {
          await callVoid((cb) => this.#consumer.seek(target, TIMEOUT_MS, cb));
          break;
        } catch (error) {
          if (attempt >= 50 || (error as RdError).code !== -172) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    } finally {
      this.#seeking--;
      if (this.#seeking === 0) this.#seeksDone?.();
    }
    // A position stored before the seek covers records settled before it, so it still stands (a
    // commit of it never skips a record nobody handled); librdkafka's seek may have reset its store.
    const stored = this.#stored.get(key);
    if (stored !== undefined) this.store(stored);
  }

  pause(): void {
    this.#paused = true;
    this.#applyPause([...this.#assigned.values()]);
  }

  resume(): void {
    this.#paused = false;
    // Every partition paused in the client, the ones revoked since among them.
    this.#applyResume([...this.#pausedInClient.values()]);
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    await this.#rebalancing;
    if (this.#tracked) await this.commit([...this.#stored.values()]).catch(() => undefined);
    this.#running = false;
    this.#seeksDone?.();
    await this.#loop?.catch(() => undefined);
    // Bounded: a cluster that went away must not hold the shutdown.
    await Promise.race([
      callVoid((cb) => this.#consumer.disconnect(cb)).catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS).unref()),
    ]);
  }

  async #run(): Promise<void> {
    while (this.#running) {
      if (this.#seeking > 0) {
        await new Promise<void>((resolve) => {
          this.#seeksDone = resolve;
        });
        continue;
      }
      const started = this.#barrier;
      let messages: RdMessage[];
      try {
        this.#consuming = call<RdMessage[]>((cb) => this.#consumer.consume(CONSUME_MAX, cb));
        messages = await this.#consuming;
      } catch (error) {
        if (!this.#running) return;
        const rd = error as RdError;
        if (rd.isFatal === true) {
          this.#hooks.failed(error);
          return;
        }
        // Transient (a broker restarting, a topic not created yet): librdkafka retries; so do we.
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      if (messages.length === 0 || !this.#running) continue;
      const fresh: ConsumedRecord[] = [];
      for (const message of messages) {
        const key = partitionKey(message);
        const held = this.#assigned.get(key);
        if (held === undefined || (this.#movedAt.get(key) ?? 0) > started) continue;
        fresh.push(recordOf(message, held.topic));
      }
      if (fresh.length > 0) this.#hooks.records(fresh);
    }
  }

  #onRebalance(error: RdError, partitions: RdTopicPartition[]): void {
    const list = partitions.map((p) => ({ topic: p.topic, partition: p.partition }));
    // Serialised: an assignment is fully applied before a revocation of it is handled.
    this.#rebalancing = this.#rebalancing
      .then(() => (error.code === ASSIGN ? this.#assign(list) : this.#revoke(list, error.code)))
      .catch((failure: unknown) => this.#hooks.failed(failure));
  }

  async #assign(partitions: TopicPartition[]): Promise<void> {
    const cooperative = this.#consumer.rebalanceProtocol() === "COOPERATIVE";
    let starts: readonly PartitionOffset[];
    try {
      starts = this.#closing ? [] : await this.#hooks.assigned(partitions);
    } catch (error) {
      this.#hooks.failed(error);
      starts = [];
    }
    const offsets = new Map(starts.map((s) => [partitionKey(s), s.offset]));
    const assignment = partitions.map((p) => {
      const offset = offsets.get(partitionKey(p));
      return offset === undefined ? plain(p) : { ...plain(p), offset: Number(offset) };
    });
    this.#ignore(() =>
      cooperative
        ? this.#consumer.incrementalAssign(assignment)
        : this.#consumer.assign(assignment),
    );
    if (!cooperative) this.#assigned.clear();
    for (const p of partitions) this.#assigned.set(partitionKey(p), p);
    // A partition still paused in the client from before (a resume that did not reach it) is
    // resumed with its assignment when the consumer is not paused.
    if (this.#paused) this.#applyPause(partitions);
    else this.#applyResume(partitions);
    this.#firstAssignment.applied();
  }

  async #revoke(partitions: TopicPartition[], code: number): Promise<void> {
    const cooperative = this.#consumer.rebalanceProtocol() === "COOPERATIVE";
    // Records of these partitions still arriving are dropped from here on: none of them is
    // committed any more, so the partition's next owner reads them from the committed position.
    for (const p of partitions) this.#assigned.delete(partitionKey(p));
    if (code === REVOKE && !this.#closing) {
      await this.#hooks.revoked(partitions).catch((error: unknown) => this.#hooks.failed(error));
      if (this.#tracked) {
        const last = partitions
          .map((p) => this.#stored.get(partitionKey(p)))
          .filter((o): o is PartitionOffset => o !== undefined);
        await this.commit(last).catch(() => undefined);
      }
    }
    for (const p of partitions) this.#stored.delete(partitionKey(p));
    this.#ignore(() =>
      cooperative
        ? this.#consumer.incrementalUnassign(partitions.map(plain))
        : this.#consumer.unassign(),
    );
  }

  #move(key: string): void {
    this.#barrier++;
    this.#movedAt.set(key, this.#barrier);
  }

  #applyPause(partitions: readonly TopicPartition[]): void {
    if (partitions.length === 0) return;
    for (const p of partitions) this.#pausedInClient.set(partitionKey(p), p);
    this.#ignore(() => this.#consumer.pause(partitions.map(plain)));
  }

  /** Resumes those of `partitions` paused in the client; others are left alone. */
  #applyResume(partitions: readonly TopicPartition[]): void {
    const paused = partitions.filter((p) => this.#pausedInClient.delete(partitionKey(p)));
    if (paused.length > 0) this.#ignore(() => this.#consumer.resume(paused.map(plain)));
  }

  // Calls the binding makes throw when the consumer is disconnecting: nothing is left to do then.
  #ignore(work: () => unknown): void {
    try {
      work();
    } catch {
      // The consumer is closing or the partition is gone.
    }
  }
}

/**
 * Errors of an offset lookup that end by themselves: librdkafka's own timeout (behind which it
 * retried UNSTABLE_OFFSET_COMMIT or a missing coordinator), a lost connection, and the coordinator
 * codes should one come through unretried.
 */
const PASSING = new Set([
  -185, // Local: Timed out
  -195, // Local: Broker transport failure
  -187, // Local: All broker connections are down
  14, // COORDINATOR_LOAD_IN_PROGRESS
  15, // COORDINATOR_NOT_AVAILABLE
  16, // NOT_COORDINATOR
  88, // UNSTABLE_OFFSET_COMMIT
]);

function passing(error: RdError): boolean {
  return PASSING.has(error.code);
}

function plain(p: TopicPartition): RdTopicPartition {
  return { topic: p.topic, partition: p.partition };
}

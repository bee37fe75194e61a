import { RustStreamError } from "@ruststream/core";
import { FirstAssignment } from "../assignmentWait.js";
import {
  type ConsumedRecord,
  type ConsumerHooks,
  type LinkConsumer,
  type PartitionOffset,
  partitionKey,
  type TopicPartition,
} from "../link.js";
import { committedOffsets } from "./admin.js";
import { refusedBatchHeader } from "./boundedGzip.js";
import { crashOutcome } from "./errors.js";
import type {
  KjsAdmin,
  KjsConsumer,
  KjsEachBatchPayload,
  KjsEventPayload,
  KjsMessage,
} from "./kafkajs.js";
import { Restarts } from "./restarts.js";

const CLOSE_WAIT_MS = 10_000;
const PAUSE_POLL_MS = 100;
const COMMIT_RETRY_MS = 500;

const empty = new Uint8Array(0);

/** Plain bytes: a view of the client's Buffer, never a Buffer (which compares unequal to bytes). */
function bytes(value: Buffer | string | null | undefined): Uint8Array {
  if (value === null || value === undefined) return empty;
  const buffer = typeof value === "string" ? Buffer.from(value) : value;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function recordOf(topic: string, partition: number, message: KjsMessage): ConsumedRecord {
  const headers: Array<readonly [string, Uint8Array]> = [];
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (Array.isArray(value)) for (const v of value) headers.push([name, bytes(v)]);
    else headers.push([name, bytes(value)]);
  }
  const record: ConsumedRecord = {
    topic,
    partition,
    offset: BigInt(message.offset),
    key: message.key === null ? undefined : bytes(message.key),
    value: bytes(message.value),
    headers,
    timestamp: Number(message.timestamp),
  };
  const refused = message.headers?.[refusedBatchHeader];
  if (refused === undefined) return record;
  // A record standing for a batch the gzip codec refused (boundedGzip.ts): undecodable.
  return {
    ...record,
    decodeError: new RustStreamError(
      "invalid-argument",
      `${String(Array.isArray(refused) ? refused[0] : refused)} (the kafkajs engine; librdkafka reads batches itself)`,
    ),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One kafkajs consumer in a group. kafkajs pushes batches into `eachBatch`; this hands them to the
 * subscription, resolves their offsets (which is what moves kafkajs's fetch position) and, while
 * the subscription asks for a pause, holds the batch loop with heartbeats so the fetch stops with
 * it. kafkajs has no revocation callback: a rebalance is learnt from its REBALANCING event and the
 * next GROUP_JOIN, and every partition held before counts as revoked (kafkajs's groups are eager).
 * Under `tracked` nothing is committed by kafkajs itself: positions the subscription stores are
 * committed here, shortly after they move. A crash kafkajs does not restart from, when the cluster
 * being away explains it, is started again here (restarts.ts); the group then assigns anew, and
 * every partition held before counts as revoked, as in a rebalance, so nothing uncommitted is lost.
 */
export class KafkajsConsumer implements LinkConsumer {
  readonly #consumer: KjsConsumer;
  readonly #admin: KjsAdmin;
  readonly #group: string;
  readonly #topics: readonly string[];
  readonly #hooks: ConsumerHooks;
  readonly #tracked: boolean;
  readonly #fromBeginning: boolean;
  readonly #assigned = new Map<string, TopicPartition>();
  readonly #stored = new Map<string, PartitionOffset>();
  readonly #toCommit = new Set<string>();
  #ready: Promise<void> = Promise.resolve();
  readonly #firstAssignment: FirstAssignment;
  #running = false;
  #paused = false;
  /** Wakes a batch held for back-pressure as soon as the subscription resumes. */
  #resumed: (() => void) | undefined;
  #closing = false;
  #commitTimer: NodeJS.Timeout | undefined;
  #committing: Promise<void> = Promise.resolve();
  readonly #unlisten: Array<() => void> = [];
  readonly #restarts = new Restarts(() => this.#run());

  constructor(
    consumer: KjsConsumer,
    admin: KjsAdmin,
    settings: {
      readonly group: string;
      readonly topics: readonly string[];
      readonly tracked: boolean;
      readonly fromBeginning: boolean;
    },
    hooks: ConsumerHooks,
  ) {
    this.#consumer = consumer;
    this.#admin = admin;
    this.#group = settings.group;
    this.#topics = settings.topics;
    this.#tracked = settings.tracked;
    this.#fromBeginning = settings.fromBeginning;
    this.#hooks = hooks;
    this.#firstAssignment = new FirstAssignment(settings.group, settings.topics);
  }

  async start(): Promise<void> {
    const events = this.#consumer.events;
    this.#unlisten.push(
      this.#consumer.on(events.GROUP_JOIN!, ({ payload }) => {
        this.#restarts.joined();
        this.#joined(payload.memberAssignment ?? {});
      }),
      this.#consumer.on(events.REBALANCING!, () => this.#rebalancing()),
      this.#consumer.on(events.CRASH!, ({ payload }) => this.#crashed(payload)),
    );
    await this.#consumer.connect();
    await this.#consumer.subscribe({
      topics: [...this.#topics],
      fromBeginning: this.#fromBeginning,
    });
    this.#running = true;
    await this.#run();
    await this.#firstAssignment.wait();
  }

  /**
   * Runs the consumer: the first time, and again after a crash. kafkajs's own crash handling has
   * disconnected it by then (its group and runner gone), so `run` builds them anew and connects;
   * a start that fails on its way ends in a CRASH event, or here.
   */
  async #run(): Promise<void> {
    if (this.#closing) return;
    try {
      await this.#consumer.run({
        autoCommit: !this.#tracked,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => this.#batch(payload),
      });
    } catch (error) {
      this.#crashed({ error, restart: false });
    }
  }

  /** kafkajs's CRASH: started again by kafkajs, by this engine, or the end of the consumer. */
  #crashed({ error, restart }: KjsEventPayload): void {
    if (this.#closing || restart === true) return;
    if (crashOutcome(error) === "restart") this.#restarts.schedule();
    else this.#hooks.failed(error);
  }

  committed(partitions: readonly TopicPartition[]): Promise<ReadonlyMap<string, bigint>> {
    return committedOffsets(this.#admin, this.#group, [...new Set(partitions.map((p) => p.topic))]);
  }

  async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    if (offsets.length === 0) return;
    await this.#consumer.commitOffsets(
      offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.offset) })),
    );
  }

  store(offset: PartitionOffset): void {
    const key = partitionKey(offset);
    if (!this.#assigned.has(key)) return;
    this.#stored.set(key, offset);
    this.#toCommit.add(key);
    // Coalesced: every settle of one turn of the event loop ends in one commit.
    this.#commitTimer ??= setTimeout(() => {
      this.#commitTimer = undefined;
      void this.#flush();
    }, 5);
  }

  async seek(offset: PartitionOffset): Promise<void> {
    // A position stored before the seek covers records settled before it, so it is still committed
    // (a commit of it never skips a record nobody handled).
    // Applied at the next fetch of the partition; until then kafkajs marks its batches stale.
    this.#consumer.seek({
      topic: offset.topic,
      partition: offset.partition,
      offset: String(offset.offset),
    });
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#resumed?.();
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#restarts.stop();
    clearTimeout(this.#commitTimer);
    await this.#ready.catch(() => undefined);
    if (this.#tracked) {
      await this.#committing.catch(() => undefined);
      await this.commit([...this.#stored.values()]).catch(() => undefined);
    }
    this.#running = false;
    await Promise.race([this.#consumer.disconnect().catch(() => undefined), sleep(CLOSE_WAIT_MS)]);
    for (const unlisten of this.#unlisten) unlisten();
  }

  async #batch({ batch, resolveOffset, heartbeat, isRunning, isStale }: KjsEachBatchPayload) {
    // No record of a partition goes out before its start offset is in place.
    await this.#ready.catch(() => undefined);
    const key = partitionKey(batch);
    if (!this.#running || isStale() || !this.#assigned.has(key)) return;
    const records = batch.messages.map((m) => recordOf(batch.topic, batch.partition, m));
    if (records.length > 0) this.#hooks.records(records);
    resolveOffset(batch.lastOffset());
    // Back-pressure: hold the batch loop while the subscription has enough; heartbeats keep the
    // membership, and a rebalance (the heartbeat throws) lets kafkajs go and rejoin.
    while (this.#paused && this.#running && isRunning() && !isStale()) {
      try {
        await heartbeat();
      } catch {
        return;
      }
      // Until the subscription resumes, or the next heartbeat is due: a fixed sleep here left the
      // fetch idle for most of it once the handlers had caught up.
      await this.#resumeOrHeartbeat();
    }
  }

  #resumeOrHeartbeat(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        if (this.#resumed === wake) this.#resumed = undefined;
        resolve();
      };
      const timer = setTimeout(wake, PAUSE_POLL_MS);
      this.#resumed = wake;
    });
  }

  #joined(assignment: Record<string, number[]>): void {
    const partitions: TopicPartition[] = [];
    for (const [topic, ids] of Object.entries(assignment)) {
      for (const partition of ids) partitions.push({ topic, partition });
    }
    const previous = [...this.#assigned.values()];
    this.#ready = this.#ready
      .catch(() => undefined)
      .then(async () => {
        if (previous.length > 0) await this.#revoke(previous);
        for (const p of partitions) this.#assigned.set(partitionKey(p), p);
        if (this.#closing) return;
        const starts = await this.#hooks.assigned(partitions);
        for (const start of starts) {
          this.#consumer.seek({
            topic: start.topic,
            partition: start.partition,
            offset: String(start.offset),
          });
        }
      })
      .catch((error: unknown) => this.#hooks.failed(error))
      .finally(() => {
        this.#firstAssignment.applied();
      });
  }

  #rebalancing(): void {
    const held = [...this.#assigned.values()];
    if (held.length === 0) return;
    this.#ready = this.#ready
      .catch(() => undefined)
      .then(() => this.#revoke(held))
      .catch((error: unknown) => this.#hooks.failed(error));
  }

  async #revoke(partitions: readonly TopicPartition[]): Promise<void> {
    const mine = partitions.filter((p) => this.#assigned.has(partitionKey(p)));
    if (mine.length === 0) return;
    if (!this.#closing)
      await this.#hooks.revoked(mine).catch((e: unknown) => this.#hooks.failed(e));
    const last = mine
      .map((p) => this.#stored.get(partitionKey(p)))
      .filter((o): o is PartitionOffset => o !== undefined);
    for (const p of mine) {
      const key = partitionKey(p);
      this.#assigned.delete(key);
      this.#stored.delete(key);
      this.#toCommit.delete(key);
    }
    // Best effort: the coordinator still takes the old generation's commit while it rebalances.
    if (this.#tracked) await this.commit(last).catch(() => undefined);
  }

  async #flush(): Promise<void> {
    const offsets: PartitionOffset[] = [];
    for (const key of this.#toCommit) {
      const stored = this.#stored.get(key);
      if (stored !== undefined) offsets.push(stored);
    }
    this.#toCommit.clear();
    if (offsets.length === 0) return;
    this.#committing = this.#committing
      .catch(() => undefined)
      .then(() => this.commit(offsets))
      .catch(() => {
        // A commit refused mid-rebalance: try again unless the partition is gone by then.
        if (this.#closing) return;
        for (const o of offsets) {
          const key = partitionKey(o);
          if (this.#assigned.has(key) && !this.#toCommit.has(key)) this.#toCommit.add(key);
        }
        this.#commitTimer ??= setTimeout(() => {
          this.#commitTimer = undefined;
          void this.#flush();
        }, COMMIT_RETRY_MS);
      });
    await this.#committing;
  }
}

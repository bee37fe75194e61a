import { randomUUID } from "node:crypto";
import { type Clock, type ClockTimer, HeaderMap, RustStreamError } from "@ruststream/core";
import { type Coordinator, LinkStates } from "@ruststream/core/broker";
import type {
  BatchQuery,
  ConsumerLink,
  ConsumerSpec,
  Frame,
  Listener,
  MessageQuery,
  NatsLink,
  PubAck,
  Received,
  SubjectMessage,
} from "../client/link.js";
import {
  consumerGone,
  countsWhileAway,
  missingBucket,
  missingObjectStore,
  noStreamStores,
} from "../client/link.js";
import type { NatsObjectInfo } from "../client/objectMeta.js";
import { headerMapOf } from "../headerValues.js";
import { jetStreamHeaders, kvHeaders, kvStream, objStream, scheduleHeaders } from "../names.js";
import { otherPriorityGroup, priorityConfig, priorityDifference } from "../priority.js";
import { pushConsumerMissing, pushConsumerUnfit, wrongConsumerKind } from "../push.js";
import type { KvBucketDeclaration, ObjectStoreDeclaration, StreamDeclaration } from "../sources.js";
import { type PinnedGroupRef, unpinRefused } from "../unpin.js";
import { StandInConsumer } from "./standInConsumer.js";
import { nextCron } from "./standInCron.js";
import { putObject, readObject } from "./standInObjects.js";
import type { PullClient } from "./standInPriority.js";
import { deliveryHeaders, type StandInSchedule } from "./standInSchedule.js";
import { goDuration, StandInStream, type StoredEntry, type StreamKind } from "./standInStream.js";
import { StandInTimers } from "./standInTimers.js";
import { subjectMatches, subjectsOverlap } from "./subjects.js";

/** The server's default `max_payload`: 1 MiB. */
const MAX_PAYLOAD = 1024 * 1024;
/** The most last messages the server answers one direct batch get with. */
const MULTI_LAST_MAX = 1024;

/** A stored entry as a message get answers it. */
function subjectMessageOf(entry: StoredEntry): SubjectMessage {
  return {
    subject: entry.subject,
    sequence: entry.sequence,
    // A copy: the reader may change it, the stream's entry stays as stored.
    payload: entry.payload.slice(),
    headers: headerMapOf(entry.headers),
    time: new Date(entry.wallTime),
  };
}

/**
 * A schedule waiting for its time: the entry that holds it, its next time (wall-clock ms, as the
 * stand-in's clock counts up to it), the timer of that time and when it falls due (clock ms).
 */
interface PendingSchedule {
  readonly stream: StandInStream;
  readonly entry: StoredEntry;
  readonly schedule: StandInSchedule;
  at: number;
  timer: ClockTimer | undefined;
  due: number;
}

interface Subscriber {
  readonly subject: string;
  readonly queue: string | undefined;
  readonly onMessage: (message: Received) => void;
}

/**
 * The in-process stand-in of a NATS server with JetStream, for TestApp: core subjects with
 * wildcards and queue groups (one member of a group gets each message, in turn), a request's
 * "no responders" answered at once, streams that store what is published on their subjects (core
 * publishes too, as the server's streams do) with deduplication and expectations, and pull
 * consumers settled as the server settles them. One per broker object; every in-process connection
 * of that broker reaches it through a link of its own.
 */
export class InProcessNats {
  /** Every timer's clock: they run while a connection is open, and hold no process. */
  readonly #clock: StandInTimers;
  readonly #subscribers = new Set<Subscriber>();
  /** Per queue group name and subject, the member that got the last message. */
  readonly #turns = new Map<string, number>();
  readonly #streams = new Map<string, StandInStream>();
  readonly #consumers = new Map<string, Map<string, StandInConsumer>>();
  readonly #schedules = new Set<PendingSchedule>();

  constructor(clock: Clock) {
    this.#clock = new StandInTimers(clock);
  }

  /** A link for one connection, counting JetStream deliveries for `coordinator`. */
  link(coordinator: Coordinator): NatsLink {
    this.#clock.opened();
    return new StandInLink(this, coordinator, () => this.#clock.closed());
  }

  listen(subscriber: Subscriber): () => void {
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  /** Routes a core publish: to every plain subscriber, one member per queue group, and the streams. */
  publish(frame: Frame): void {
    const message: Received = {
      subject: frame.subject,
      payload: frame.payload,
      headers: headerMapOf(frame.headers),
      reply: frame.reply,
      status: undefined,
      decodeError: undefined,
    };
    const groups = new Map<string, Subscriber[]>();
    const plain: Subscriber[] = [];
    for (const s of this.#subscribers) {
      if (!subjectMatches(s.subject, frame.subject)) continue;
      if (s.queue === undefined) plain.push(s);
      else groups.set(s.queue, [...(groups.get(s.queue) ?? []), s]);
    }
    const chosen = [...plain];
    for (const [queue, members] of groups) {
      const key = `${queue} ${frame.subject}`;
      const turn = ((this.#turns.get(key) ?? -1) + 1) % members.length;
      this.#turns.set(key, turn);
      chosen.push(members[turn] as Subscriber);
    }
    const stream = this.#streamFor(frame.subject);
    if (stream !== undefined) this.#store(stream, frame);
    if (chosen.length === 0 && stream === undefined && frame.reply !== undefined) {
      // Nobody listens: the server answers the request's reply subject with a 503 status at once.
      this.publishStatus(frame.reply, 503);
      return;
    }
    for (const s of chosen) s.onMessage(message);
  }

  publishStatus(subject: string, status: number): void {
    const message: Received = {
      subject,
      payload: new Uint8Array(),
      headers: new HeaderMap(),
      reply: undefined,
      status,
      decodeError: undefined,
    };
    for (const s of this.#subscribers) if (subjectMatches(s.subject, subject)) s.onMessage(message);
  }

  publishStored(frame: Frame): PubAck {
    const stream = this.#streamFor(frame.subject);
    if (stream === undefined) throw noStreamStores(frame.subject);
    return this.#store(stream, frame);
  }

  streamOf(subject: string): string {
    const stream = this.#streamFor(subject);
    if (stream === undefined) throw noStreamStores(subject);
    return stream.name;
  }

  /**
   * Stores `frames` in one stream, all of them or (refused before any is stored) none, as an
   * atomic batch; the last one's acknowledgement.
   */
  publishAtomic(frames: readonly Frame[]): PubAck {
    const [first] = frames;
    if (first === undefined) {
      throw new RustStreamError("invalid-argument", "an atomic batch needs a message or more");
    }
    const stream = this.#streamFor(first.subject);
    if (stream === undefined || frames.length === 1) return this.publishStored(first);
    if (!stream.atomic) {
      throw new RustStreamError(
        "unsupported",
        `the stream that stores "${first.subject}" takes no atomic batches: allow them (allow_atomic, NATS 2.12 or newer; declare: { atomicPublish: true })`,
      );
    }
    for (const frame of frames) {
      if (this.#streamFor(frame.subject) !== stream) {
        throw new RustStreamError(
          "publish-refused",
          `an atomic batch goes to one stream: "${frame.subject}" is not stored by "${stream.name}"`,
        );
      }
      if (frame.headers.some(([name]) => name.startsWith("Nats-"))) {
        throw new RustStreamError(
          "unsupported",
          "the in-process stand-in takes no message ids or expectations inside an atomic batch",
        );
      }
    }
    let ack: PubAck | undefined;
    for (const frame of frames) ack = this.#store(stream, frame);
    return ack as PubAck;
  }

  ensureStream(
    stream: string,
    subjects: readonly string[],
    declaration: StreamDeclaration | undefined,
    kind?: StreamKind,
  ): void {
    if (this.#streams.has(stream)) return;
    if (declaration === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `the JetStream stream "${stream}" does not exist: create it (nats stream add), or let the subscription declare it with JetStreamSubject's declare option ({ declare: { subjects, storage, ... } })`,
      );
    }
    const wanted = declaration.subjects ?? subjects;
    for (const other of this.#streams.values()) {
      if (wanted.some((a) => other.subjects.some((b) => subjectsOverlap(a, b)))) {
        throw new RustStreamError(
          "broker-failure",
          `subjects overlap with an existing stream ("${other.name}"): the server refuses the stream "${stream}"`,
        );
      }
    }
    this.#streams.set(stream, new StandInStream(stream, wanted, declaration, kind));
    this.#consumers.set(stream, new Map());
  }

  /**
   * A bucket is a stream of `$KV.<bucket>.>` keeping `history` entries a key (default 1) and
   * taking purges' rollups, as the server keeps the stream a client declares for one.
   */
  ensureBucket(bucket: string, declaration: KvBucketDeclaration | undefined): void {
    const stream = kvStream(bucket);
    if (this.#streams.has(stream)) return;
    if (declaration === undefined) throw missingBucket(bucket);
    const marker = declaration.markerTtlMs;
    this.ensureStream(
      stream,
      [`$KV.${bucket}.>`],
      {},
      {
        perSubject: declaration.history ?? 1,
        // As the KV clients declare a bucket: gets answered by any replica.
        direct: true,
        markerTtlSeconds: marker === undefined ? undefined : marker / 1000,
      },
    );
  }

  /** An object store is a stream of its chunks and its objects' info, taking rollups. */
  ensureObjectStore(bucket: string, declaration: ObjectStoreDeclaration | undefined): void {
    const stream = objStream(bucket);
    if (this.#streams.has(stream)) return;
    if (declaration === undefined) throw missingObjectStore(bucket);
    this.ensureStream(
      stream,
      [`$O.${bucket}.C.>`, `$O.${bucket}.M.>`],
      {},
      {
        perSubject: Number.MAX_SAFE_INTEGER,
      },
    );
  }

  putObject(bucket: string, name: string, content: Uint8Array) {
    const server = {
      store: (stream: StandInStream, frame: Frame) => this.#store(stream, frame),
      purge: (stream: StandInStream, subject: string) => this.purgeSubject(stream.name, subject),
    };
    return putObject(server, this.#stream(objStream(bucket)), bucket, name, content);
  }

  readObject(info: NatsObjectInfo, maxBytes: number): Uint8Array {
    return readObject(this.#stream(objStream(info.bucket)), info, maxBytes);
  }

  message(name: string, query: MessageQuery): SubjectMessage | undefined {
    const stream = this.#stream(name);
    const entry =
      "lastOn" in query
        ? stream.lastOn(query.lastOn)
        : "sequence" in query
          ? stream.entryAt(query.sequence)
          : stream.entries.find((e) => e.sequence >= query.from && e.subject === query.nextOn);
    return entry === undefined ? undefined : subjectMessageOf(entry);
  }

  /** A direct batch get, with the server's bound on the last messages it answers at once. */
  messages(name: string, query: BatchQuery): SubjectMessage[] | undefined {
    const stream = this.#stream(name);
    if (!("lastOf" in query)) {
      return stream.entries
        .filter((e) => e.sequence >= query.from && e.subject === query.nextOn)
        .map(subjectMessageOf);
    }
    const last = new Map<string, StoredEntry>();
    for (const entry of stream.entries)
      if (subjectMatches(query.lastOf, entry.subject)) last.set(entry.subject, entry);
    if (last.size > MULTI_LAST_MAX) return undefined;
    return [...last.values()]
      .sort((a, b) => (a.sequence < b.sequence ? -1 : 1))
      .map(subjectMessageOf);
  }

  allowsDirect(name: string): boolean {
    return this.#stream(name).direct;
  }

  purgeSubject(name: string, subject: string, before?: bigint): number {
    const stream = this.#stream(name);
    const removed = stream.purge(subject, before);
    for (const consumer of this.#consumers.get(stream.name)?.values() ?? [])
      for (const sequence of removed) consumer.removed(sequence);
    // A schedule purged before its time is cancelled, its timer with it.
    for (const pending of this.#schedules) {
      if (pending.stream === stream && removed.includes(pending.entry.sequence)) {
        pending.timer?.cancel();
        this.#schedules.delete(pending);
      }
    }
    return removed.length;
  }

  subjects(name: string, filter: string): string[] {
    const held = this.#stream(name).entries.map((e) => e.subject);
    return [...new Set(held.filter((subject) => subjectMatches(filter, subject)))];
  }

  streamBounds(name: string): { first: bigint; last: bigint } {
    const stream = this.#stream(name);
    return { first: stream.first, last: stream.last };
  }

  consumer(spec: ConsumerSpec, coordinator: Coordinator): StandInConsumer {
    const stream = this.#stream(spec.stream);
    const consumers = this.#consumers.get(spec.stream) as Map<string, StandInConsumer>;
    if (spec.durable !== undefined) {
      const existing = consumers.get(spec.durable);
      const push = spec.settings.push;
      if (existing !== undefined && existing.push !== (push !== undefined))
        throw wrongConsumerKind(spec.stream, spec.durable, existing.push);
      if (existing === undefined && push === "bind")
        throw pushConsumerMissing(spec.stream, spec.durable);
      if (existing !== undefined && push !== undefined) {
        const unfit = pushConsumerUnfit(
          spec.stream,
          spec.durable,
          "explicit",
          existing.ackWaitMs,
          spec.settings.ackWaitMs,
        );
        if (unfit !== undefined) throw unfit;
      }
      if (existing !== undefined && !spec.replace) {
        // As the server refuses to change a durable's priority group; the words the package's.
        const difference = priorityDifference(
          priorityConfig(existing.priority),
          spec.settings.priority,
        );
        if (difference !== undefined)
          throw otherPriorityGroup(spec.stream, spec.durable, difference);
        existing.coordinator = coordinator;
        return existing;
      }
      existing?.delete();
    }
    const name = spec.durable ?? randomUUID().replaceAll("-", "").slice(0, 22);
    const consumer = new StandInConsumer(
      {
        name,
        stream,
        durable: spec.durable !== undefined,
        ordered: spec.ordered === true,
        subjects: spec.subjects,
        settings: spec.settings,
        startAt: spec.startAt ?? spec.settings.deliver,
      },
      this.#clock,
      coordinator,
    );
    consumers.set(name, consumer);
    return consumer;
  }

  /** An unpin of a consumer's priority group, refused as the server refuses one. */
  unpin(ref: PinnedGroupRef): boolean {
    if (!this.#streams.has(ref.stream)) throw unpinRefused.noStream(ref, undefined);
    const consumer = this.#consumers.get(ref.stream)?.get(ref.consumer);
    if (consumer === undefined) throw unpinRefused.noConsumer(ref, undefined);
    return consumer.unpin(ref);
  }

  hasConsumer(consumer: StandInConsumer): boolean {
    return this.#consumers.get(consumer.stream.name)?.get(consumer.name) === consumer;
  }

  deleteConsumer(consumer: StandInConsumer): void {
    const consumers = this.#consumers.get(consumer.stream.name);
    if (consumers?.get(consumer.name) === consumer) consumers.delete(consumer.name);
    consumer.delete();
  }

  #stream(name: string): StandInStream {
    const stream = this.#streams.get(name);
    if (stream === undefined)
      throw new RustStreamError("broker-failure", `stream not found: "${name}"`);
    return stream;
  }

  #streamFor(subject: string): StandInStream | undefined {
    for (const stream of this.#streams.values()) if (stream.stores(subject)) return stream;
    return undefined;
  }

  #store(stream: StandInStream, frame: Frame): PubAck {
    const stored = stream.store(frame, this.#clock.now(), Date.now());
    const entry = stored.entry;
    if (entry !== undefined) {
      for (const consumer of this.#consumers.get(stream.name)?.values() ?? []) {
        for (const sequence of stored.removed) consumer.removed(sequence);
        consumer.stored(entry);
      }
      if (stored.ttlSeconds > 0)
        this.#clock.setTimer(stored.ttlSeconds * 1000, () => this.#expire(stream, entry));
      const { schedule } = stored;
      if (schedule !== undefined) {
        // The wall-clock wait, counted on the stand-in's clock (a test's ManualClock moves it).
        const pending: PendingSchedule = {
          stream,
          entry,
          schedule,
          at: schedule.at,
          timer: undefined,
          due: 0,
        };
        this.#schedules.add(pending);
        this.#arm(pending, schedule.at - entry.wallTime);
      }
      // A one-time schedule's delivery removes the schedule, as the server does.
      const header = (name: string) => entry.headers.find(([n]) => n === name)?.[1];
      const scheduler = header(scheduleHeaders.scheduler);
      if (header(scheduleHeaders.next) === "purge" && scheduler !== undefined)
        this.purgeSubject(stream.name, scheduler);
    }
    return { stream: stored.stream, sequence: stored.sequence, duplicate: stored.duplicate };
  }

  /**
   * A schedule's time came: unless it was replaced, removed, or its stream deleted, a copy of it
   * goes to its target, and a repeating one waits for its next time.
   */
  #fire(pending: PendingSchedule): void {
    pending.timer = undefined;
    const { stream, entry, schedule } = pending;
    const { everyMs, cron } = schedule;
    const gone =
      this.#streams.get(stream.name) !== stream || stream.entryAt(entry.sequence) !== entry;
    // Now on the wall clock as the stand-in's clock counts it: the time that came, and how late.
    const now = pending.at + this.#clock.now() - pending.due;
    const nextCronAt = cron === undefined ? undefined : nextCronTime(cron, pending.at, now);
    // One with no time left in the server's five years is dropped undelivered, as the server drops it.
    const ended = cron !== undefined && nextCronAt === undefined;
    if (gone || ended || (everyMs === undefined && cron === undefined))
      this.#schedules.delete(pending);
    if (gone || ended) return;
    const next =
      cron !== undefined && nextCronAt !== undefined
        ? cron.zone.format(nextCronAt)
        : everyMs === undefined
          ? undefined
          : new Date(Date.now() + everyMs).toISOString();
    // A source's last message is delivered in place of the schedule's own, when it has one.
    const delivered =
      (schedule.source === undefined ? undefined : stream.lastOn(schedule.source)) ?? entry;
    this.#store(stream, {
      subject: schedule.target,
      payload: delivered.payload,
      headers: deliveryHeaders(delivered.headers, entry.subject, next, schedule),
    });
    if (everyMs !== undefined) this.#arm(pending, everyMs);
    if (nextCronAt !== undefined) {
      pending.at = nextCronAt;
      this.#arm(pending, nextCronAt - now);
    }
  }

  #arm(pending: PendingSchedule, ms: number): void {
    pending.due = this.#clock.now() + ms;
    pending.timer = this.#clock.setTimer(ms, () => this.#fire(pending));
  }

  /**
   * An entry whose own TTL ran out goes; under markers, a subject it leaves empty gets the
   * server's marker (unless it was a marker itself), which is a rollup living the markers' TTL.
   */
  #expire(stream: StandInStream, entry: StoredEntry): void {
    if (!stream.remove(entry.sequence)) return;
    for (const consumer of this.#consumers.get(stream.name)?.values() ?? [])
      consumer.removed(entry.sequence);
    const marker = stream.markerTtlSeconds;
    const wasMarker = entry.headers.some(
      ([name, value]) =>
        name === kvHeaders.markerReason || (name === kvHeaders.operation && value === "PURGE"),
    );
    if (marker === undefined || wasMarker || stream.lastOn(entry.subject) !== undefined) return;
    this.#store(stream, {
      subject: entry.subject,
      payload: new Uint8Array(0),
      headers: [
        [kvHeaders.markerReason, "MaxAge"],
        [jetStreamHeaders.ttl, goDuration(marker)],
        [kvHeaders.rollup, "sub"],
      ],
    });
  }
}

/**
 * A cron schedule's time after the one that came at `at` (a test's ManualClock moved past several
 * runs them one by one); where that is before `now` already, its timer held while no connection
 * was open, the next after now, as the server skips ahead to fire once.
 */
function nextCronTime(
  cron: NonNullable<StandInSchedule["cron"]>,
  at: number,
  now: number,
): number | undefined {
  const next = nextCron(cron.pattern, cron.zone, at);
  return next === undefined || next >= now
    ? next
    : nextCron(cron.pattern, cron.zone, Math.round(now / 1000) * 1000);
}

/** One connection's link to the stand-in. */
class StandInLink implements NatsLink {
  readonly states = new LinkStates();
  readonly maxPayload = MAX_PAYLOAD;
  readonly #server: InProcessNats;
  readonly #coordinator: Coordinator;
  readonly #listeners = new Set<() => void>();
  readonly #consumers = new Set<StandInConsumer>();
  readonly #onClose: () => void;
  #closed = false;

  constructor(server: InProcessNats, coordinator: Coordinator, onClose: () => void) {
    this.#server = server;
    this.#coordinator = coordinator;
    this.#onClose = onClose;
  }

  publish(frame: Frame): void {
    this.#assertOpen();
    this.#server.publish(frame);
  }

  async flush(): Promise<void> {
    this.#assertOpen();
  }

  /** The stand-in's settlements reach its server when made: none are held. */
  async settlementsWritten(): Promise<void> {}

  listen(
    subject: string,
    queue: string | undefined,
    onMessage: (message: Received) => void,
  ): Listener {
    this.#assertOpen();
    const unlisten = this.#server.listen({ subject, queue, onMessage });
    this.#listeners.add(unlisten);
    return {
      close: () => {
        this.#listeners.delete(unlisten);
        unlisten();
      },
    };
  }

  async publishStored(frame: Frame): Promise<PubAck> {
    this.#assertOpen();
    return this.#server.publishStored(frame);
  }

  async publishAtomic(frames: readonly Frame[]): Promise<PubAck> {
    this.#assertOpen();
    return this.#server.publishAtomic(frames);
  }

  async ensureStream(
    stream: string,
    subjects: readonly string[],
    declaration: StreamDeclaration | undefined,
  ): Promise<void> {
    this.#assertOpen();
    this.#server.ensureStream(stream, subjects, declaration);
  }

  async ensureBucket(bucket: string, declaration: KvBucketDeclaration | undefined): Promise<void> {
    this.#assertOpen();
    this.#server.ensureBucket(bucket, declaration);
  }

  async ensureObjectStore(
    bucket: string,
    declaration: ObjectStoreDeclaration | undefined,
  ): Promise<void> {
    this.#assertOpen();
    this.#server.ensureObjectStore(bucket, declaration);
  }

  async putObject(bucket: string, name: string, content: Uint8Array) {
    this.#assertOpen();
    return this.#server.putObject(bucket, name, content);
  }

  async readObject(info: NatsObjectInfo, maxBytes: number): Promise<Uint8Array> {
    this.#assertOpen();
    return this.#server.readObject(info, maxBytes);
  }

  async messages(stream: string, query: BatchQuery): Promise<SubjectMessage[] | undefined> {
    this.#assertOpen();
    return this.#server.messages(stream, query);
  }

  /** One stand-in answers every get: a direct one reads what the leader's would. */
  async message(stream: string, query: MessageQuery): Promise<SubjectMessage | undefined> {
    this.#assertOpen();
    return this.#server.message(stream, query);
  }

  async allowsDirect(stream: string): Promise<boolean> {
    this.#assertOpen();
    return this.#server.allowsDirect(stream);
  }

  async purgeSubject(stream: string, subject: string, before?: bigint): Promise<number> {
    this.#assertOpen();
    return this.#server.purgeSubject(stream, subject, before);
  }

  async streamOf(subject: string): Promise<string> {
    this.#assertOpen();
    return this.#server.streamOf(subject);
  }

  async subjects(stream: string, filter: string): Promise<string[]> {
    this.#assertOpen();
    return this.#server.subjects(stream, filter);
  }

  async streamBounds(stream: string): Promise<{ first: bigint; last: bigint }> {
    return this.#server.streamBounds(stream);
  }

  async unpin(stream: string, consumer: string, group: string): Promise<boolean> {
    this.#assertOpen();
    return this.#server.unpin({ stream, consumer, group });
  }

  async consumer(spec: ConsumerSpec): Promise<ConsumerLink> {
    this.#assertOpen();
    const consumer = this.#server.consumer(spec, this.#coordinator);
    this.#consumers.add(consumer);
    const server = this.#server;
    const consumers = this.#consumers;
    // This link is one client of the consumer: its pulls carry its part of the priority group.
    const client: PullClient = { priority: spec.settings.priority };
    return {
      name: consumer.name,
      pull: (_max, _expiresMs, sink) => consumer.pull(sink, client),
      // A stopped pull leaves the stand-in at once: the naks come back in stream order.
      giveBack: async (messages) => {
        for (const m of [...messages].sort((a, b) =>
          a.streamSequence < b.streamSequence ? -1 : 1,
        ))
          m.nak();
      },
      exists: async () => server.hasConsumer(consumer),
      counts: async () => {
        if (this.#closed)
          throw countsWhileAway(spec.stream, consumer.name, "the connection is closed");
        if (!server.hasConsumer(consumer)) throw consumerGone(spec.stream, consumer.name);
        return consumer.counts();
      },
      async close() {
        // As the package unpins on the server when a subscription lets go of its pin.
        consumer.letGo(client);
        consumers.delete(consumer);
        if (!consumer.durable) server.deleteConsumer(consumer);
      },
    };
  }

  inbox(): string {
    return `_INBOX.${randomUUID().replaceAll("-", "")}`;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose();
    for (const unlisten of this.#listeners) unlisten();
    this.#listeners.clear();
    for (const consumer of this.#consumers)
      if (!consumer.durable) this.#server.deleteConsumer(consumer);
    this.#consumers.clear();
  }

  #assertOpen(): void {
    if (this.#closed)
      throw new RustStreamError("closed", "the in-process NATS connection is closed");
  }
}

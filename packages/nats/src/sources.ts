import {
  type AddressedSource,
  type Bindings,
  type CommitMode,
  type NamedSource,
  RustStreamError,
} from "@ruststream/core";
import { positive, sourceMark } from "@ruststream/core/broker";
import { checkBucket, checkKey, checkSubject, kvStream, objStream } from "./names.js";
import { checkPriority, type PriorityGroup, type PrioritySettings } from "./priority.js";
import {
  checkPush,
  type EphemeralPushBinding,
  type PushBinding,
  type PushSettings,
} from "./push.js";
import { wholeSeconds } from "./ttl.js";

/** Whether a subject has a wildcard token (`*` or `>`), so nothing can be published to it. */
export function isWildcard(subject: string): boolean {
  return subject.split(".").some((token) => token === "*" || token === ">");
}

/** Where retry copies of a wildcard subscription go: it must be named, since none can be derived. */
export function copiesTo(
  subjects: readonly string[],
  redeliverTo: string | undefined,
  what: string,
): string {
  if (redeliverTo !== undefined) {
    checkSubject(redeliverTo, `${what} redeliverTo`);
    if (isWildcard(redeliverTo)) {
      throw new RustStreamError(
        "invalid-argument",
        `${what} redeliverTo: "${redeliverTo}" is a wildcard: name a subject a copy can be published to`,
      );
    }
    return redeliverTo;
  }
  const [only] = subjects;
  if (subjects.length !== 1 || only === undefined || isWildcard(only)) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} "${subjects.join(", ")}": a wildcard or several subjects name no subject to republish a retry copy to: give redeliverTo, a subject this subscription receives`,
    );
  }
  return only;
}

export interface NatsSubjectOptions {
  /** A queue group: each message goes to one member of the group, not to each subscriber. */
  readonly queue?: string;
  /** Where retry copies are published: required for a wildcard subject (a subject it receives). */
  readonly redeliverTo?: string;
  /**
   * The most messages waiting here for the handler (default 65536). Core NATS pushes whatever is
   * published; past this, new arrivals are dropped (and counted in the subscription's `dropped`),
   * as the server itself drops for a client that falls behind, rather than held without bound.
   */
  readonly maxBuffered?: number;
}

/**
 * A core NATS subscription: a subject (`orders.created`), or a wildcard (`orders.*`,
 * `orders.>`), optionally in a queue group. Core NATS keeps nothing and acknowledges nothing: a
 * message reaches whoever is subscribed when it is published, ack and drop are advisory, and a
 * retry is a copy this process republishes (carrying `x-ruststream-retry-count`) to the subject,
 * or to `redeliverTo` for a wildcard.
 */
export class NatsSubject implements AddressedSource {
  readonly [sourceMark] = "nats";
  readonly copies = "addressed" as const;
  readonly name: string;
  readonly queue: string | undefined;
  readonly redeliveryAddress: string;
  readonly maxBuffered: number;
  readonly bindings: Bindings;

  constructor(subject: string, options: NatsSubjectOptions = {}) {
    this.name = checkSubject(subject, "NatsSubject");
    if (
      options.queue !== undefined &&
      (typeof options.queue !== "string" || !/^\S+$/.test(options.queue))
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `NatsSubject queue: ${JSON.stringify(options.queue)} is not a queue group name (non-empty, no spaces)`,
      );
    }
    this.queue = options.queue;
    this.maxBuffered = positive("maxBuffered", options.maxBuffered, 65_536);
    this.redeliveryAddress = copiesTo([subject], options.redeliverTo, "NatsSubject");
    this.bindings = {
      nats: { subject, ...(this.queue === undefined ? {} : { queue: this.queue }) },
    };
  }
}

/** Where a new JetStream consumer starts. */
export type DeliverPolicy =
  | "all"
  | "new"
  | "last"
  | "last-per-subject"
  | { readonly sequence: bigint | number }
  | { readonly time: Date };

/** A stream the subscription declares when it is missing (never silently: only when given). */
export interface StreamDeclaration {
  /** The subjects it stores (default: the subscription's subjects). */
  readonly subjects?: readonly string[];
  readonly retention?: "limits" | "interest" | "workqueue";
  readonly storage?: "file" | "memory";
  readonly replicas?: number;
  readonly maxMessages?: number;
  readonly maxBytes?: number;
  readonly maxAgeMs?: number;
  /** The window in which a repeated `Nats-Msg-Id` is a duplicate (default: the server's, 2 min). */
  readonly duplicateWindowMs?: number;
  /** Takes atomic batches (`allow_atomic`, NATS 2.12): what a transaction publishes. */
  readonly atomicPublish?: boolean;
  /** Takes a message's own TTL (`allow_msg_ttl`, NATS 2.11): what a publish's `ttlMs` asks. */
  readonly messageTtl?: boolean;
  /**
   * Takes message schedules (`allow_msg_schedules`, NATS 2.12): what a publish's `schedule` asks.
   * The server allows subject rollups with it (a schedule replaces the one before on its subject).
   */
  readonly messageSchedules?: boolean;
}

/**
 * A JetStreamSubject's options: those of every consumer, and either a durable's (`durable`, and
 * its push binding) or an ephemeral one's (no `durable`; a push consumer of its own, whose deliver
 * subject may be left to an inbox).
 */
export type JetStreamSubjectOptions = JetStreamConsumerOptions &
  (DurableConsumerOptions | EphemeralConsumerOptions);

/** A durable consumer's: its name, and how it binds to a push consumer. */
export interface DurableConsumerOptions {
  /**
   * A durable consumer's name: the server keeps its position and unacknowledged messages across
   * restarts and shares them between every process with the name. Without it the consumer is
   * ephemeral, the app's own: gone with its connection.
   */
  readonly durable: string;
  /**
   * Binds to a push consumer (the server pushes to its deliver subject) instead of pulling: `true`
   * to one that exists, `{ declare: { deliverSubject, deliverGroup?, idleHeartbeatMs?,
   * flowControl? } }` creating it when missing. Settled as a pull consumer is.
   */
  readonly push?: PushBinding;
}

/** An ephemeral consumer's: no name, and a push consumer of the subscription's own. */
export interface EphemeralConsumerOptions {
  readonly durable?: undefined;
  /**
   * Makes an ephemeral push consumer (the server pushes to its deliver subject) instead of
   * pulling: `{ declare: { deliverSubject?, idleHeartbeatMs?, flowControl? } }`, the deliver
   * subject by default a fresh inbox of the connection. Settled as a pull consumer is.
   */
  readonly push?: EphemeralPushBinding;
}

/** The options of every JetStream consumer a JetStreamSubject makes, durable or ephemeral. */
export interface JetStreamConsumerOptions {
  /** The stream that stores the subjects: it must exist, or `declare` creates it. */
  readonly stream: string;
  /** How long the server waits for a settlement before delivering again (default 30000 ms). */
  readonly ackWaitMs?: number;
  /** The most messages delivered and not yet settled at once (default: the server's, 1000). */
  readonly maxAckPending?: number;
  /** Where a new consumer starts (default `"all"`); an existing durable keeps its position. */
  readonly deliver?: DeliverPolicy;
  /** The server delivers a message at most this many times (default: without end). */
  readonly maxDeliver?: number;
  /** The server's delays between redeliveries after an ack wait expired, in ms. */
  readonly backoffMs?: readonly number[];
  /** How long one pull request waits at the server for messages (default 5000 ms, at least 1000). */
  readonly pullExpiresMs?: number;
  /**
   * The most messages the consumer's pulls ask for at once (default 256), asked again ahead of
   * need as they arrive; also the most that wait in the subscription, past which it asks for none.
   */
  readonly fetchSize?: number;
  /**
   * The server deletes the consumer once nobody pulled from it for this long (default: a durable
   * never, an ephemeral after 60000 ms).
   */
  readonly inactiveThresholdMs?: number;
  /** Where retry copies go, should one be needed: required for a wildcard or several subjects. */
  readonly redeliverTo?: string;
  /** Creates the stream when it is missing, with these settings. */
  readonly declare?: StreamDeclaration;
  /**
   * A priority group (NATS 2.11 or newer) on the durable consumer: `pinned`, one app handles the
   * messages while it pulls and another takes over once it stops; `overflow`, an app with
   * `minPending`/`minAckPending` is served only while the consumer's backlog is past them;
   * `prioritized` (2.12), the apps of the lowest `priority` level are served first. Every app of
   * the durable gives the same group and policy (and `pinTtlMs`).
   */
  readonly priority?: PriorityGroup;
  /**
   * `auto` (default): an ack is sent and not confirmed; `tracked`: an ack resolves once the server
   * confirmed it (`ackAck`), so a settled delivery is never delivered again.
   */
  readonly commit?: CommitMode;
}

/** The consumer settings the server is given, read from the options once. */
export interface ConsumerSettings {
  readonly ackWaitMs: number;
  readonly maxAckPending: number | undefined;
  readonly deliver: DeliverPolicy;
  readonly maxDeliver: number | undefined;
  readonly backoffMs: readonly number[] | undefined;
  readonly pullExpiresMs: number;
  readonly fetchSize: number;
  readonly inactiveThresholdMs: number | undefined;
  /** The consumer's priority group and what this app's pulls carry for it. */
  readonly priority: PrioritySettings | undefined;
  /** A push consumer bound to (`"bind"`) or declared; `undefined`: a pull consumer. */
  readonly push?: PushSettings | undefined;
}

/**
 * A JetStream pull consumer on one subject or several (each a filter: `orders.*`). Settlement is
 * the server's: ack, requeue as `nak`, delayed requeue as `nak(delay)`, drop as `term`; the attempt
 * is the server's delivery count; a handler running past half of `ackWaitMs` tells the server it is
 * still working, so it is not delivered again behind its back.
 */
export class JetStreamSubject implements AddressedSource {
  readonly [sourceMark] = "nats";
  readonly copies = "addressed" as const;
  readonly name: string;
  readonly subjects: readonly string[];
  readonly stream: string;
  readonly durable: string | undefined;
  readonly declare: StreamDeclaration | undefined;
  readonly commit: "auto" | "tracked";
  readonly settings: ConsumerSettings;
  readonly redeliveryAddress: string;
  readonly bindings: Bindings;

  constructor(subjects: string | readonly string[], options: JetStreamSubjectOptions) {
    const list = typeof subjects === "string" ? [subjects] : [...subjects];
    if (list.length === 0) {
      throw new RustStreamError("invalid-argument", "JetStreamSubject needs a subject or several");
    }
    for (const s of list) checkSubject(s, "JetStreamSubject");
    checkStream(options?.stream, list, "JetStreamSubject");
    if (options.durable !== undefined && !/^[^\s.*>/\\]+$/.test(options.durable)) {
      throw new RustStreamError(
        "invalid-argument",
        `JetStreamSubject durable: ${JSON.stringify(options.durable)} is not a consumer name (no spaces, dots, *, >, slashes)`,
      );
    }
    if (options.commit !== undefined && options.commit !== "auto" && options.commit !== "tracked") {
      throw new RustStreamError(
        "invalid-argument",
        `JetStreamSubject commit: "${String(options.commit)}" is not a JetStream commit mode: "auto" (an ack sent) or "tracked" (an ack the server confirmed); JetStream has no transaction joining settlements and publishes`,
      );
    }
    this.subjects = list;
    this.name = list.join(",");
    this.stream = options.stream;
    this.durable = options.durable;
    this.declare = options.declare;
    this.commit = options.commit ?? "auto";
    this.settings = {
      ...pullTuning(options, "JetStreamSubject"),
      deliver: checkDeliver(options.deliver ?? "all", "JetStreamSubject"),
      maxDeliver:
        options.maxDeliver === undefined
          ? undefined
          : positive("maxDeliver", options.maxDeliver, 1),
      backoffMs: checkBackoff(options.backoffMs, options.maxDeliver),
      inactiveThresholdMs:
        options.inactiveThresholdMs === undefined
          ? undefined
          : positive("inactiveThresholdMs", options.inactiveThresholdMs, 1),
      priority: checkPriority(options.priority, options.durable),
      push: checkPush(options.push, options.durable, options.priority),
    };
    this.redeliveryAddress = copiesTo(list, options.redeliverTo, "JetStreamSubject");
    this.bindings = {
      nats: {
        subjects: list,
        stream: this.stream,
        ...(this.durable === undefined ? {} : { durable: this.durable }),
        ackWaitMs: this.settings.ackWaitMs,
      },
    };
  }
}

/** The stream a JetStream source reads, checked for `what` (named in a refusal). */
export function checkStream(stream: unknown, subjects: readonly string[], what: string): string {
  if (typeof stream !== "string" || !/^[^\s.*>/\\]+$/.test(stream)) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} needs the stream that stores "${subjects.join(", ")}": { stream: "ORDERS" } (no spaces, dots, *, >, slashes)`,
    );
  }
  return stream;
}

/** A pull request's wait at the server: the client takes 1000 ms or more. */
export function checkExpires(ms: number | undefined, what: string): number {
  const value = positive("pullExpiresMs", ms, 5000);
  if (value < 1000) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} pullExpiresMs: ${value} is under the 1000 ms the client takes for a pull request's wait`,
    );
  }
  return value;
}

/** A deliver policy checked, for `what` (named in a refusal). */
export function checkDeliver(deliver: DeliverPolicy, what: string): DeliverPolicy {
  if (typeof deliver === "string" && ["all", "new", "last", "last-per-subject"].includes(deliver))
    return deliver;
  if (typeof deliver === "object" && deliver !== null) {
    if ("sequence" in deliver) {
      const seq = BigInt(deliver.sequence);
      if (seq >= 1n) return { sequence: seq };
    }
    if ("time" in deliver && deliver.time instanceof Date && !Number.isNaN(deliver.time.getTime()))
      return deliver;
  }
  throw new RustStreamError(
    "invalid-argument",
    `${what} deliver: give "all", "new", "last", "last-per-subject", { sequence } (1 or more) or { time: Date }, not ${JSON.stringify(deliver)}`,
  );
}

function checkBackoff(backoff: readonly number[] | undefined, maxDeliver: number | undefined) {
  if (backoff === undefined) return undefined;
  if (
    !Array.isArray(backoff) ||
    backoff.length === 0 ||
    backoff.some((ms) => !Number.isSafeInteger(ms) || ms < 1)
  ) {
    throw new RustStreamError(
      "invalid-argument",
      "JetStreamSubject backoffMs: give a list of delays in whole milliseconds, each 1 or more",
    );
  }
  // The server refuses a backoff list longer than max_deliver allows; say so before it does.
  if (maxDeliver === undefined || backoff.length >= maxDeliver) {
    throw new RustStreamError(
      "invalid-argument",
      `JetStreamSubject backoffMs: the server takes a backoff only with maxDeliver, and a list shorter than it (${backoff.length} delays, maxDeliver ${String(maxDeliver)})`,
    );
  }
  return [...backoff];
}

/**
 * Where a KV watch starts: `"last-per-key"` (default) each key's latest entry then every change,
 * `"all"` every entry the bucket still holds (its history), `"new"` the changes from now on,
 * `{ revision }` every entry from that revision on.
 */
export type KvStart = "new" | "all" | "last-per-key" | { readonly revision: bigint | number };

/** A bucket the watch declares when it is missing (never silently: only when given). */
export interface KvBucketDeclaration {
  /** The entries kept per key (default 1, the server's most 64). */
  readonly history?: number;
  readonly storage?: "file" | "memory";
  readonly replicas?: number;
  readonly maxBytes?: number;
  /** The largest value a put may store. */
  readonly maxValueSize?: number;
  /** How long an entry is kept. */
  readonly ttlMs?: number;
  /**
   * Lets a put carry its own TTL (`ttlMs`; the stream's `allow_msg_ttl`, NATS 2.11): a key whose
   * last entry runs out of time gets a marker from the server, which watches and `get` see as a
   * purge, kept this long (whole seconds, 1000 ms or more), as the KV clients' `markerTTL`.
   */
  readonly markerTtlMs?: number;
}

/** A bucket's declaration, checked where it is given (a watch, a `NatsKv`). */
export function checkKvDeclaration(
  declaration: KvBucketDeclaration | undefined,
  what: string,
): KvBucketDeclaration | undefined {
  const marker = declaration?.markerTtlMs;
  if (marker !== undefined) wholeSeconds(marker, `${what} declare.markerTtlMs`);
  return declaration;
}

export interface KvWatchOptions extends PullTuningOptions {
  /** A key or a filter (`users.*`, `users.>`), or several; default `">"`, every key. */
  readonly keys?: string | readonly string[];
  /** Where the watch starts (default `"last-per-key"`). */
  readonly start?: KvStart;
  /**
   * Hands deletes and purges to the handler too, with an empty payload (default false: they are
   * acknowledged unseen). A handler taking them decodes an empty payload: use the `bytes` codec.
   */
  readonly deletes?: boolean;
  /** Creates the bucket when it is missing, with these settings. */
  readonly declare?: KvBucketDeclaration;
}

/**
 * A watch on a KV bucket: the bucket's changes (puts, and deletes and purges when asked) of a key
 * or a filter, from where `start` says. A bucket is a stream (`KV_<bucket>`, a key's subject
 * `$KV.<bucket>.<key>`), and the watch an ephemeral consumer of its own on it, settled as a
 * JetStream consumer is: a failed handler's entry is delivered again by the server. A delivery is
 * a `KvDelivery` (its `key`, `revision`, `operation`).
 */
export class KvWatch implements NamedSource {
  readonly [sourceMark] = "nats";
  /** The server requeues; a copy republished to a key would be a new put, so none is made. */
  readonly copies = "named" as const;
  readonly name: string;
  readonly bucket: string;
  readonly keys: readonly string[];
  readonly stream: string;
  readonly subjects: readonly string[];
  readonly durable = undefined;
  readonly commit = "auto" as const;
  readonly deletes: boolean;
  readonly declare: KvBucketDeclaration | undefined;
  readonly settings: ConsumerSettings;
  readonly bindings: Bindings;

  constructor(bucket: string, options: KvWatchOptions = {}) {
    this.bucket = checkBucket(bucket, "KvWatch");
    const keys =
      options.keys === undefined
        ? [">"]
        : typeof options.keys === "string"
          ? [options.keys]
          : [...options.keys];
    if (keys.length === 0)
      throw new RustStreamError(
        "invalid-argument",
        "KvWatch keys: give a key or a filter, or leave it out for every key",
      );
    for (const key of keys) checkKey(key, "KvWatch keys", true);
    this.keys = keys;
    this.stream = kvStream(this.bucket);
    this.subjects = keys.map((key) => `$KV.${this.bucket}.${key}`);
    this.name = `${this.bucket}:${keys.join(",")}`;
    this.deletes = options.deletes === true;
    this.declare = checkKvDeclaration(options.declare, "KvWatch");
    this.settings = watchSettings(
      options,
      deliverOfStart(options.start ?? "last-per-key"),
      "KvWatch",
    );
    this.bindings = {
      nats: { bucket: this.bucket, keys, ackWaitMs: this.settings.ackWaitMs },
    };
  }
}

/** A watch's start as the consumer's deliver policy: a revision is the stream sequence. */
function deliverOfStart(start: KvStart): DeliverPolicy {
  if (start === "new" || start === "all") return start;
  if (start === "last-per-key") return "last-per-subject";
  if (typeof start === "object" && start !== null && "revision" in start) {
    const revision =
      typeof start.revision === "bigint" || Number.isSafeInteger(start.revision)
        ? BigInt(start.revision)
        : 0n;
    if (revision >= 1n) return { sequence: revision };
  }
  throw new RustStreamError(
    "invalid-argument",
    `KvWatch start: give "new", "all", "last-per-key" or { revision } (1 or more), not ${JSON.stringify(start, (_, v) => (typeof v === "bigint" ? String(v) : v))}`,
  );
}

/** An object store a watch or a put declares when it is missing (never silently: only when given). */
export interface ObjectStoreDeclaration {
  readonly storage?: "file" | "memory";
  readonly replicas?: number;
  readonly maxBytes?: number;
  /** How long an object is kept. */
  readonly ttlMs?: number;
}

export interface ObjectWatchOptions extends PullTuningOptions {
  /**
   * `"last-per-object"` (default): each object's latest info, then every change; `"all"` every
   * entry the store holds; `"new"` the changes from now on.
   */
  readonly start?: "last-per-object" | "all" | "new";
  /** Hands deleted objects' entries to the handler too (`info.deleted`); default false. */
  readonly deletes?: boolean;
  /** The largest object `read()` takes (default 8 MiB); a larger one is refused before reading. */
  readonly maxBytes?: number;
  /** Creates the object store when it is missing, with these settings. */
  readonly declare?: ObjectStoreDeclaration;
}

/**
 * A watch on an object store: each object put (and deleted, when asked), as its info (the JSON the
 * object store clients write: name, size, digest, ...), the handler's message. The content is
 * read when the handler asks (`ObjectDelivery.read()`), up to `maxBytes`. A store is a stream
 * (`OBJ_<bucket>`), the watch an ephemeral consumer of its own on its objects' info, settled as a
 * JetStream consumer is.
 */
export class ObjectWatch implements NamedSource {
  readonly [sourceMark] = "nats";
  /** The server requeues; a copy would be a new object, so none is made. */
  readonly copies = "named" as const;
  readonly name: string;
  readonly bucket: string;
  readonly stream: string;
  readonly subjects: readonly string[];
  readonly durable = undefined;
  readonly commit = "auto" as const;
  readonly deletes: boolean;
  readonly maxBytes: number;
  readonly declare: ObjectStoreDeclaration | undefined;
  readonly settings: ConsumerSettings;
  readonly bindings: Bindings;

  constructor(bucket: string, options: ObjectWatchOptions = {}) {
    this.bucket = checkBucket(bucket, "ObjectWatch");
    this.name = this.bucket;
    this.stream = objStream(this.bucket);
    this.subjects = [`$O.${this.bucket}.M.>`];
    this.deletes = options.deletes === true;
    this.maxBytes = positive("maxBytes", options.maxBytes, 8 * 1024 * 1024);
    this.declare = options.declare;
    const start = options.start ?? "last-per-object";
    if (start !== "last-per-object" && start !== "all" && start !== "new") {
      throw new RustStreamError(
        "invalid-argument",
        `ObjectWatch start: give "last-per-object", "all" or "new", not ${JSON.stringify(start)}`,
      );
    }
    this.settings = watchSettings(
      options,
      start === "last-per-object" ? "last-per-subject" : start,
      "ObjectWatch",
    );
    this.bindings = { nats: { objectStore: this.bucket, ackWaitMs: this.settings.ackWaitMs } };
  }
}

/**
 * A watch's consumer: ephemeral, settled as a JetStream consumer's, starting at `deliver`, with no
 * server-side delivery cap or backoff (the runtime's `maxAttempts` and `deadLetter` cap it).
 */
function watchSettings(
  options: PullTuningOptions,
  deliver: DeliverPolicy,
  what: string,
): ConsumerSettings {
  return {
    ...pullTuning(options, what),
    deliver,
    maxDeliver: undefined,
    backoffMs: undefined,
    inactiveThresholdMs: undefined,
    priority: undefined,
  };
}

/** How a pull consumer is paced, as every JetStream source (a subject, a watch) takes it. */
export type PullTuningOptions = Pick<
  JetStreamConsumerOptions,
  "ackWaitMs" | "maxAckPending" | "pullExpiresMs" | "fetchSize"
>;

/** The pacing options checked, with their defaults, for `what` (named in a refusal). */
function pullTuning(
  options: PullTuningOptions,
  what: string,
): Pick<ConsumerSettings, "ackWaitMs" | "maxAckPending" | "pullExpiresMs" | "fetchSize"> {
  return {
    ackWaitMs: positive("ackWaitMs", options.ackWaitMs, 30_000),
    maxAckPending:
      options.maxAckPending === undefined
        ? undefined
        : positive("maxAckPending", options.maxAckPending, 1),
    pullExpiresMs: checkExpires(options.pullExpiresMs, what),
    fetchSize: positive("fetchSize", options.fetchSize, 256),
  };
}

import { type ReadonlyHeaderMap, RustStreamError } from "@ruststream/core";
import type { LinkStates } from "@ruststream/core/broker";
import type {
  ConsumerSettings,
  DeliverPolicy,
  KvBucketDeclaration,
  ObjectStoreDeclaration,
  StreamDeclaration,
} from "../sources.js";
import type { NatsObjectInfo } from "./objectMeta.js";

// What the broker needs from its connection to the NATS server: the only place it meets the wire.
// client/natsLink.ts implements it over @nats-io/transport-node and @nats-io/jetstream;
// inProcess/ implements it over a stand-in of the server, so everything above runs unchanged in
// TestApp.

/**
 * Which message a get reads: the last one stored on a subject (`lastOn`), the one stored at a
 * sequence, or the first one on a subject at or after the sequence `from` (`nextOn`).
 */
export type MessageQuery =
  | { readonly lastOn: string }
  | { readonly sequence: bigint }
  | { readonly nextOn: string; readonly from: bigint };

/**
 * What a direct batch get reads (NATS 2.11): the last message on each subject a filter matches,
 * or the messages on one subject from a sequence on.
 */
export type BatchQuery =
  | { readonly lastOf: string }
  | { readonly nextOn: string; readonly from: bigint };

/** A message a stream stored, as a message get reads it. */
export interface SubjectMessage {
  readonly subject: string;
  readonly sequence: bigint;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
  /** When the stream stored it. */
  readonly time: Date;
}

/** A message with a TTL for a stream that takes none (`allow_msg_ttl` unset). */
export function ttlDisabled(subject: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "unsupported",
    `the stream that stores "${subject}" takes no per-message TTL: allow it (allow_msg_ttl, NATS 2.11 or newer; declare: { messageTtl: true } on a stream, { markerTtlMs } on a KV bucket)`,
    { cause },
  );
}

/**
 * A `Nats-Rollup` publish to a stream that takes no rollups (`allow_rollup_hdrs` unset): the server
 * refuses it ("rollup not permitted") rather than trim the subject.
 */
export function rollupRefused(subject: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "publish-refused",
    `the stream that stores "${subject}" takes no rollups (Nats-Rollup): allow them (allow_rollup_hdrs on the stream; declare: { messageSchedules: true } brings them, as do a KV bucket's and an object store's streams), or publish without the header`,
    { cause },
  );
}

/** A message going out: headers already as NATS carries them (text, checked by the publisher). */
export interface Frame {
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly headers: readonly (readonly [string, string])[];
  /** The native reply subject (a request's inbox). */
  readonly reply?: string | undefined;
}

/** A message as a core subscription receives it. */
export interface Received {
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
  readonly reply: string | undefined;
  /** A status the server sent instead of a message: 503 answers a request nobody listens to. */
  readonly status: number | undefined;
  /**
   * Why its headers could not be read (core's error; the headers are then empty), or `undefined`:
   * the delivery's `decodeError`, which the runtime settles by the decode policy.
   */
  readonly decodeError: Error | undefined;
}

/** A message a JetStream consumer delivered, with the verbs that settle it at the server. */
export interface Stored extends Received {
  readonly stream: string;
  readonly consumer: string;
  readonly streamSequence: bigint;
  /** The server's count of deliveries, this one included (1 the first time). */
  readonly deliveryCount: number;
  /**
   * When the stream stored it, on the subscription's clock: the server's timestamp (its delivery
   * info, ms since the epoch by the server's clock), the test clock's ms in-process.
   */
  readonly storedAt: number;
  /** Acknowledges without waiting for the server's confirmation. */
  ack(): void;
  /** Acknowledges and resolves once the server confirmed it. */
  ackConfirmed(): Promise<void>;
  /** Asks the server to deliver it again, after `delayMs` when given. */
  nak(delayMs?: number): void;
  /** Asks the server never to deliver it again. */
  term(reason: string): void;
  /** Tells the server the handler is still at it: the ack wait starts again. */
  working(): void;
}

/** A listener on a core subject, until `close()`. */
export interface Listener {
  close(): void;
}

/**
 * Where a consumer's pulls hand their messages: the subscription, which says when it has no room
 * for more. Until it has again nothing more is asked of the server, so what a subscription holds
 * stays bounded however slow its handlers are.
 */
export interface PullSink {
  /** One message the server delivered. */
  arrived(message: Stored): void;
  /** `undefined` while it takes more; else a promise that resolves once it does (or it stopped). */
  room(): Promise<void> | undefined;
  /** The server answered the pulls with no message (a heartbeat): it takes them. */
  accepted(): void;
  /**
   * A push consumer's server sent none of the heartbeats it promised (`idle_heartbeat`) for
   * `count` of their periods: it is not pushing to this app. Cleared by `accepted()`.
   */
  missed(count: number): void;
}

/**
 * What a consumer's pulls fail with when the server refuses them for a reason a retry does not fix
 * (the account may not ask for messages, or not receive them): asked again, they are refused again
 * until an operator changes the permissions.
 */
export class PullRefused extends RustStreamError {
  constructor(message: string, cause: unknown) {
    super("broker-failure", message, { cause });
  }
}

/** A consumer's counts asked of a server that no longer has it: the server's answer, said with the check. */
export function consumerGone(stream: string, consumer: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    `the consumer "${consumer}" on the JetStream stream "${stream}" is gone from the server (deleted, or past its inactive threshold): no counts until it is there again (nats consumer ls ${stream})`,
    { cause },
  );
}

/**
 * A consumer's counts asked while the connection is away: refused at once, where a request would
 * wait for the client's API timeout.
 */
export function countsWhileAway(stream: string, consumer: string, away: string): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    `the counts of the consumer "${consumer}" on the JetStream stream "${stream}": the connection to the NATS server is away (${away}); they are asked again once it is back`,
  );
}

/** An object store that is not there and that nothing declares. */
export function missingObjectStore(bucket: string): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `the object store "${bucket}" does not exist: create it (nats object add ${bucket}), or let the watch or the put declare it with their declare option ({ declare: { storage, ... } })`,
  );
}

/** A bucket that is not there and that nothing declares. */
/** A subject no JetStream stream stores, said with the fix. */
export function noStreamStores(subject: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    `no JetStream stream stores "${subject}": create one, or declare it from a JetStreamSubject`,
    { cause },
  );
}

export function missingBucket(bucket: string): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `the KV bucket "${bucket}" does not exist: create it (nats kv add ${bucket}), or let the watch declare it with KvWatch's declare option ({ declare: { history, storage, ... } })`,
  );
}

/**
 * A consumer's pulls until stopped: up to `max` messages asked for at once, asked again ahead of
 * need as they arrive (so one is outstanding while the handlers work), each request waiting at the
 * server at most `expiresMs`.
 */
export interface PullRequest {
  /** Resolves once stopped (what arrived before the stop handed over); rejects on a failure. */
  readonly done: Promise<void>;
  /** Ends it: no more messages are asked for. */
  stop(): void;
}

/** A consumer's counts, as one consumer info request answers them. */
export interface ConsumerCounts {
  /** Messages its filter matches that it has not delivered yet (`num_pending`). */
  readonly undelivered: number;
  /**
   * Delivered and not acknowledged yet (`num_ack_pending`): in a handler, waiting in a client, or
   * given back with a `nak` and not delivered again yet (with a delay or not).
   */
  readonly unacknowledged: number;
}

/** A JetStream consumer this connection pulls from. */
export interface ConsumerLink {
  readonly name: string;
  /**
   * Its counts now, in one request; rejects (`broker-failure`, naming the check) at once when the
   * connection is away, and when the server no longer has the consumer.
   */
  counts(): Promise<ConsumerCounts>;
  pull(max: number, expiresMs: number, sink: PullSink): PullRequest;
  /**
   * Hands `messages` back to the server (`nak`), to be delivered again in stream order, once no
   * pull request of this link is left at the server to take them (call it after stopping them).
   */
  giveBack(messages: readonly Stored[]): Promise<void>;
  /** Whether the server still has it (false once deleted, or gone past its inactive threshold). */
  exists(): Promise<boolean>;
  /** Lets go of it: an ephemeral consumer is deleted, a durable one stays with the server. */
  close(): Promise<void>;
}

/** What a consumer is created from. `startAt` overrides the settings' deliver policy (a seek). */
export interface ConsumerSpec {
  readonly stream: string;
  readonly durable: string | undefined;
  readonly subjects: readonly string[];
  readonly settings: ConsumerSettings;
  readonly startAt?: DeliverPolicy;
  /** Deletes a durable consumer first, so it starts at `startAt` (a seek). */
  readonly replace?: boolean;
  /**
   * An ordered consumer: ephemeral, acknowledging nothing (ack policy none), in stream order; the
   * client creates it again after the last message it read on a gap, a lost heartbeat or its
   * deletion. Its messages' verbs send nothing (`durable` is then undefined).
   */
  readonly ordered?: boolean;
}

/** JetStream's answer to a stored publish. */
export interface PubAck {
  readonly stream: string;
  readonly sequence: bigint;
  readonly duplicate: boolean;
}

/** The link to one server (or cluster) through one client connection. */
export interface NatsLink {
  /** The connection's state as its client reports it. */
  readonly states: LinkStates;
  /** The largest payload (with headers) the server takes: its `max_payload`. */
  readonly maxPayload: number;
  /** Publishes on core NATS: sent, not confirmed. */
  publish(frame: Frame): void;
  /** Resolves once the server has processed everything sent before it (a round trip). */
  flush(): Promise<void>;
  /**
   * Writes the JetStream settlements (acks, naks, terms, working beats) held to the end of the
   * event loop's turn, and resolves once the server has processed them: what a subscription
   * letting go, or the connection closing, waits for, so no settlement made is lost.
   */
  settlementsWritten(): Promise<void>;
  /** Listens to a subject (a wildcard), in a queue group when given. */
  listen(
    subject: string,
    queue: string | undefined,
    onMessage: (message: Received) => void,
  ): Listener;
  /** Publishes to a stream; resolves with the server's acknowledgement (its headers carry expectations). */
  publishStored(frame: Frame): Promise<PubAck>;
  /**
   * Publishes `frames` to one stream as one atomic batch (NATS 2.12): all stored, or none.
   * Resolves with the acknowledgement of the last.
   */
  publishAtomic(frames: readonly Frame[]): Promise<PubAck>;
  /**
   * Makes sure the stream exists: creates it from `declaration` when missing and given, else
   * rejects with `invalid-argument` naming the stream and the option that declares it.
   */
  ensureStream(
    stream: string,
    subjects: readonly string[],
    declaration: StreamDeclaration | undefined,
  ): Promise<void>;
  /**
   * Makes sure the KV bucket exists: creates it from `declaration` when missing and given, else
   * rejects with `invalid-argument` naming the bucket and the option that declares it.
   */
  ensureBucket(bucket: string, declaration: KvBucketDeclaration | undefined): Promise<void>;
  /** As `ensureBucket`, for an object store (`OBJ_<bucket>`). */
  ensureObjectStore(bucket: string, declaration: ObjectStoreDeclaration | undefined): Promise<void>;
  /**
   * Puts `content` as the object `name` (its chunks, then its info, replacing an object of that
   * name, whose chunks go): resolves with the info and the revision that stored it.
   */
  putObject(
    bucket: string,
    name: string,
    content: Uint8Array,
  ): Promise<{ readonly info: NatsObjectInfo; readonly revision: bigint }>;
  /**
   * Reads the object an info names (its chunks by its unique id, so that version and no other),
   * refused before a byte is read when it is larger than `maxBytes`; checked against the info.
   */
  readObject(info: NatsObjectInfo, maxBytes: number): Promise<Uint8Array>;
  /**
   * The message of `stream` that `query` names (the server's message get), or `undefined` when it
   * holds none such. `direct`: any of the stream's replicas answers (a direct get, on a stream
   * that allows them), else its leader.
   */
  message(
    stream: string,
    query: MessageQuery,
    direct?: boolean,
  ): Promise<SubjectMessage | undefined>;
  /**
   * A direct batch get of `stream` (one that allows direct gets; NATS 2.11), in the order of the
   * messages' sequences: for `lastOf`, the last message on each subject the filter matches, or
   * `undefined` when they are more than the server answers at once (1024); for `nextOn`, every
   * message on the subject from `from` on.
   */
  messages(stream: string, query: BatchQuery): Promise<SubjectMessage[] | undefined>;
  /** Whether `stream` takes direct gets (`allow_direct`). */
  allowsDirect(stream: string): Promise<boolean>;
  /**
   * Drops the messages `stream` holds on `subject` (a purge by filter): every one, or with
   * `before` those stored before that sequence. Resolves with how many it dropped.
   */
  purgeSubject(stream: string, subject: string, before?: bigint): Promise<number>;
  /** The name of the stream that stores `subject`; rejects `broker-failure` when none does. */
  streamOf(subject: string): Promise<string>;
  /** The subjects `stream` holds messages on that `filter` matches (a wildcard), in no order. */
  subjects(stream: string, filter: string): Promise<string[]>;
  /** The stream's first and last sequence now (both 0 while it is empty and never written). */
  streamBounds(stream: string): Promise<{ readonly first: bigint; readonly last: bigint }>;
  /**
   * Unpins the pinned priority `group` of `consumer` on `stream`: resolves whether a client held
   * the pin; refuses (`invalid-argument`, saying which) a stream, consumer or group the server does
   * not have, and a group whose policy is not `pinned_client`.
   */
  unpin(stream: string, consumer: string, group: string): Promise<boolean>;
  /** Creates (or, for a durable, binds to) a consumer. */
  consumer(spec: ConsumerSpec): Promise<ConsumerLink>;
  /** A new unique inbox prefix, for request/reply. */
  inbox(): string;
  /** Drains nothing: closes the connection; subscriptions end. */
  close(): Promise<void>;
}

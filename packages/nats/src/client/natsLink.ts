import {
  AckPolicy,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  DeliverPolicy as JsDeliverPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StoredMsg,
} from "@nats-io/jetstream";
import {
  type ConnectionOptions,
  createInbox,
  credsAuthenticator,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  NoRespondersError,
  headers as natsHeaders,
  nkeyAuthenticator,
  PermissionViolationError,
} from "@nats-io/transport-node";
import { consoleLogger, type Logger, RustStreamError } from "@ruststream/core";
import { LinkStates, nodeTlsSettings, resolveTls } from "@ruststream/core/broker";
import { headerMapOf } from "../headerValues.js";
import { kvStream, objChunkSubject, objStream } from "../names.js";
import { credentialsOf, isWebsocket, type NatsBrokerOptions, serverList } from "../options.js";
import {
  otherPriorityGroup,
  priorityConfig,
  priorityDifference,
  priorityPull,
} from "../priority.js";
import {
  type PushDeclaration,
  type PushSettings,
  pushConsumerMissing,
  pushConsumerTaken,
  pushConsumerUnfit,
  wrongConsumerKind,
} from "../push.js";
import {
  schedulePatternRefused,
  scheduleSourceRefused,
  schedulesDisabled,
  scheduleTargetRefused,
} from "../schedule.js";
import type {
  ConsumerSettings,
  DeliverPolicy,
  KvBucketDeclaration,
  ObjectStoreDeclaration,
  StreamDeclaration,
} from "../sources.js";
import { type PinnedGroupRef, unpinRefused } from "../unpin.js";
import { isApiError } from "./apiErrors.js";
import { ApiRetry, type RetriedCall, TransientAnswer } from "./apiRetry.js";
import { ClientStored } from "./clientStored.js";
import { consumerCounts } from "./consumerCounts.js";
import { HeldPin, type PinLetGo } from "./heldPin.js";
import { HeldSettlements } from "./heldSettlements.js";
import {
  type BatchQuery,
  type ConsumerLink,
  type ConsumerSpec,
  type Frame,
  type Listener,
  type MessageQuery,
  missingBucket,
  missingObjectStore,
  type NatsLink,
  noStreamStores,
  type PubAck,
  type PullRequest,
  type Received,
  rollupRefused,
  type Stored,
  type SubjectMessage,
  ttlDisabled,
} from "./link.js";
import { loadKv, loadObj } from "./loadPeers.js";
import { assertReadable, joinChunks, type NatsObjectInfo } from "./objectMeta.js";
import { orderedConsumer } from "./orderedConsumer.js";
import { pullLoop } from "./pullLoop.js";
import { PullRefusals } from "./pullRefusals.js";
import { readHeaders } from "./receivedHeaders.js";
import { dial } from "./transport.js";

const nanos = (ms: number) => ms * 1_000_000;
/** An ephemeral consumer the server deletes once nobody pulled from it for this long. */
const EPHEMERAL_INACTIVE_MS = 60_000;

/** The client's connection options from the broker's: servers, credentials, TLS, reconnects. */
export function connectionOptions(options: NatsBrokerOptions, appName?: string): ConnectionOptions {
  const credentials = credentialsOf(options);
  // A websocket's TLS is its URL's (wss://), checked with the system's CAs: the client's websocket
  // transport refuses any tls option, and checkOptions refused settings it could not honour.
  const tls = isWebsocket(options)
    ? undefined
    : resolveTls(
        "NatsBroker tls",
        options.tls,
        serverList(options).some((s) => s.startsWith("tls://")),
      );
  const auth: ConnectionOptions =
    credentials === undefined
      ? {}
      : "password" in credentials
        ? { user: credentials.user, pass: credentials.password }
        : "token" in credentials
          ? { token: credentials.token }
          : "nkeySeed" in credentials
            ? { authenticator: nkeyAuthenticator(new TextEncoder().encode(credentials.nkeySeed)) }
            : {
                authenticator: credsAuthenticator(
                  typeof credentials.creds === "string"
                    ? new TextEncoder().encode(credentials.creds)
                    : credentials.creds,
                ),
              };
  const name = options.name ?? appName;
  return {
    servers: serverList(options),
    ...auth,
    // node:tls's own settings: the client passes them on to tls.connect (a list of CAs included).
    ...(tls === undefined
      ? {}
      : { tls: nodeTlsSettings(tls) as unknown as NonNullable<ConnectionOptions["tls"]> }),
    ...(name === undefined ? {} : { name }),
    maxReconnectAttempts: options.maxReconnectAttempts ?? -1,
    reconnectTimeWait: options.reconnectWaitMs ?? 2000,
  };
}

/**
 * Connects; a refusal (credentials, TLS, nobody listening) is a `broker-failure` saying so. `log`
 * hears what the link sees on its own (a pin moving); default core's console logger.
 */
export async function connectLink(
  options: NatsBrokerOptions,
  appName?: string,
  log: Logger = consoleLogger(),
): Promise<NatsLink> {
  let nc: NatsConnection;
  const websocket = isWebsocket(options);
  try {
    nc = await dial(websocket ? "websocket" : "TCP", connectionOptions(options, appName));
  } catch (error) {
    if (error instanceof RustStreamError) throw error;
    // Node's WebSocket reports a failed opening with an empty message.
    const said =
      (error as Error).message || (websocket ? websocketNotOpened(options) : "no reason given");
    throw new RustStreamError(
      "broker-failure",
      `could not connect to NATS at ${serverList(options).join(", ")}: ${said}${(error as Error).cause ? ` (${String((error as Error).cause)})` : ""}`,
      { cause: error },
    );
  }
  const timeout = options.apiTimeoutMs ?? 5000;
  const jsm = await jetstreamManager(nc, { timeout, checkAPI: false });
  const retry = new ApiRetry(options.apiRetryWithinMs ?? 30_000, () => nc.info?.jetstream === true);
  return new ClientLink(nc, jetstream(nc, { timeout }), jsm, retry, timeout, log);
}

/**
 * Why a websocket may not have opened. Over wss:// an untrusted certificate is the likely one, and
 * its fix is outside the options (Node's WebSocket takes no CA), so the message names it.
 */
function websocketNotOpened(options: NatsBrokerOptions): string {
  const overTls = serverList(options).some((server) => /^wss:/i.test(server));
  return overTls
    ? "the websocket did not open (nothing listening, no NATS websocket listener, or TLS refused: the server's certificate must be signed by a CA the process trusts, the system's or one in the file NODE_EXTRA_CA_CERTS names when the process starts)"
    : "the websocket did not open (nothing listening, or no NATS websocket listener)";
}

/** A frame's header lines as the client sends them (none: no header block). */
export function natsHeadersOf(frame: Frame): MsgHdrs | undefined {
  if (frame.headers.length === 0) return undefined;
  const h = natsHeaders();
  for (const [name, value] of frame.headers) h.set(name, value);
  return h;
}

function received(m: Msg): Received {
  const read = readHeaders(m);
  return {
    subject: m.subject,
    payload: m.data,
    headers: read.headers,
    reply: m.reply === "" ? undefined : m.reply,
    status: read.status,
    decodeError: read.unreadable,
  };
}

const byStreamSequence = (a: Stored, b: Stored) =>
  a.streamSequence < b.streamSequence ? -1 : a.streamSequence > b.streamSequence ? 1 : 0;

function deliverConfig(policy: DeliverPolicy) {
  if (policy === "all") return { deliver_policy: JsDeliverPolicy.All };
  if (policy === "new") return { deliver_policy: JsDeliverPolicy.New };
  if (policy === "last") return { deliver_policy: JsDeliverPolicy.Last };
  if (policy === "last-per-subject") return { deliver_policy: JsDeliverPolicy.LastPerSubject };
  if ("sequence" in policy)
    return {
      deliver_policy: JsDeliverPolicy.StartSequence,
      opt_start_seq: Number(policy.sequence),
    };
  return { deliver_policy: JsDeliverPolicy.StartTime, opt_start_time: policy.time.toISOString() };
}

/** The server's settings of the consumer a subscription asks for. */
function consumerConfig(spec: ConsumerSpec) {
  const { settings } = spec;
  const [only] = spec.subjects;
  const filters =
    spec.subjects.length === 1 && only !== undefined
      ? { filter_subject: only }
      : { filter_subjects: [...spec.subjects] };
  return {
    ...(spec.durable === undefined ? {} : { durable_name: spec.durable }),
    ...(settings.inactiveThresholdMs !== undefined || spec.durable === undefined
      ? { inactive_threshold: nanos(settings.inactiveThresholdMs ?? EPHEMERAL_INACTIVE_MS) }
      : {}),
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(settings.ackWaitMs),
    ...(settings.maxAckPending === undefined ? {} : { max_ack_pending: settings.maxAckPending }),
    ...(settings.maxDeliver === undefined ? {} : { max_deliver: settings.maxDeliver }),
    ...(settings.backoffMs === undefined ? {} : { backoff: settings.backoffMs.map(nanos) }),
    ...deliverConfig(spec.startAt ?? settings.deliver),
    ...priorityConfig(settings.priority),
    ...filters,
  };
}

/**
 * What a refused JetStream publish says: the stream's refusal (an expectation that does not hold)
 * is `publish-refused`, as no retry changes it; no stream for the subject, or a server away, is a
 * `broker-failure`.
 */
function publishError(subject: string, error: unknown): RustStreamError {
  if (isApiError(error, 10166)) return ttlDisabled(subject, error);
  if (isApiError(error, 10188)) return schedulesDisabled(subject, error);
  if (isApiError(error, 10190)) return scheduleTargetRefused(subject, error);
  if (isApiError(error, 10203)) return scheduleSourceRefused(subject, error);
  // A pattern, or a time zone, the server cannot read.
  if (isApiError(error, 10189) || isApiError(error, 10223))
    return schedulePatternRefused(subject, error);
  // The generic rollup failure: this one is a stream without `allow_rollup_hdrs`.
  if (isApiError(error, 10111) && /rollup not permitted/.test(String(error)))
    return rollupRefused(subject, error);
  if (isApiError(error, 10174)) {
    return new RustStreamError(
      "unsupported",
      `the stream that stores "${subject}" takes no atomic batches: allow them (allow_atomic, NATS 2.12 or newer; declare: { atomicPublish: true })`,
      { cause: error },
    );
  }
  if (error instanceof JetStreamApiError) {
    return new RustStreamError(
      "publish-refused",
      `the stream refused the message for "${subject}": ${error.message}`,
      { cause: error },
    );
  }
  if (error instanceof NoRespondersError || /no responders/i.test(String(error))) {
    return noStreamStores(subject, error);
  }
  return new RustStreamError(
    "broker-failure",
    `publishing to "${subject}" failed: ${String(error)}`,
    {
      cause: error,
    },
  );
}

/** The headers a direct get's answer carries to say where the message is (not the message's). */
const directHeaders = new Set([
  "Nats-Stream",
  "Nats-Sequence",
  "Nats-Time-Stamp",
  "Nats-Subject",
  "Nats-Last-Sequence",
  "Nats-Num-Pending",
]);

/** A message get's query, in words. */
/** How many messages a direct batch get by subject asks for at once. */
const DIRECT_BATCH = 1024;

/** A message get's answer as the package reads it: a direct get's own headers left out. */
function subjectMessageOf(sm: StoredMsg, direct: boolean): SubjectMessage {
  const lines: [string, string][] = [];
  for (const name of sm.header?.keys() ?? []) {
    // A direct get's answer says where the message is in headers of its own: not the message's.
    if (direct && directHeaders.has(name)) continue;
    for (const value of sm.header.values(name)) lines.push([name, value]);
  }
  return {
    subject: sm.subject,
    sequence: BigInt(sm.seq),
    payload: sm.data,
    headers: headerMapOf(lines),
    time: sm.time,
  };
}

function describeQuery(query: MessageQuery): string {
  if ("lastOn" in query) return `the last message on "${query.lastOn}"`;
  if ("sequence" in query) return `the message at sequence ${query.sequence}`;
  return `the first message on "${query.nextOn}" from sequence ${query.from}`;
}

/**
 * Lets go of a pinned group's pin this client holds, so the server pins another client's pulls at
 * once rather than after the pin's TTL. Only a pin still this client's is given up (the server
 * may have moved it already: "moved"); a failure leaves it to the TTL ("failed").
 */
async function giveUpPin(jsm: JetStreamManager, pin: HeldPin, id: string): Promise<PinLetGo> {
  const { stream, consumer, group } = pin.place;
  try {
    const info = await jsm.consumers.info(stream, consumer);
    if (pinnedClient(info, group) !== id) return "moved";
    await jsm.consumers.unpin(stream, consumer, group);
    return "given-up";
  } catch {
    // The pin lapses after its TTL anyway.
    return "failed";
  }
}

/** The client the server has pinned in `group` of a consumer, as its info says, if any. */
function pinnedClient(info: object, group: string): string | undefined {
  // The client's types do not carry the consumer info's priority group state yet.
  const groups = (info as { priority_groups?: { group: string; pinned_client_id?: string }[] })
    .priority_groups;
  return groups?.find((g) => g.group === group)?.pinned_client_id || undefined;
}

/**
 * What a consumer's link does with the messages it settles, alike for pull and push: hands
 * messages back in stream order, tells whether the server still has it, and lets go (`close`).
 */
function settledConsumer(
  jsm: JetStreamManager,
  held: HeldSettlements,
  away: () => string | undefined,
  stream: string,
  name: string,
  close: () => Promise<void>,
): Pick<ConsumerLink, "counts" | "giveBack" | "exists" | "close"> {
  return {
    counts: () => consumerCounts(stream, name, away(), () => jsm.consumers.info(stream, name)),
    async giveBack(messages) {
      if (messages.length === 0) return;
      // A stopped pull request stays at the server until it finds its inbox gone; one that is
      // still there when a nak arrives takes the message and puts it back last, out of order. A
      // consumer info request makes the server drop the requests nobody listens to any more.
      await jsm.consumers.info(stream, name).catch(() => undefined);
      for (const m of [...messages].sort(byStreamSequence)) m.nak();
      // Ahead of what the subscription asks next (a consumer deleted, or made again by a seek).
      held.write();
    },
    async exists() {
      try {
        await jsm.consumers.info(stream, name);
        return true;
      } catch (error) {
        if (isApiError(error, 10014)) return false;
        throw error;
      }
    },
    close,
  };
}

/** The link over one client connection. */
class ClientLink implements NatsLink {
  readonly states = new LinkStates();
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #retry: ApiRetry;
  /** How long a request waits for the server's answer (the broker's `apiTimeoutMs`). */
  readonly #timeoutMs: number;
  /** The consumers' settlements of this turn of the event loop, written at its end. */
  readonly #held = new HeldSettlements();
  /** The consumers' running pulls, which a publish the server refuses may be of. */
  readonly #pullRefusals = new PullRefusals();
  /** The app's logger: a pinned group's pin moving. */
  readonly #log: Logger;
  #closing = false;
  /** Why the connection is away (the client's last status), while it is; else `undefined`. */
  #away: string | undefined;
  /** Why a request now would wait for the client's API timeout, or `undefined` when it would not. */
  readonly #awayOf = (): string | undefined =>
    this.#nc.isClosed() ? "the connection is closed" : this.#away;

  constructor(
    nc: NatsConnection,
    js: JetStreamClient,
    jsm: JetStreamManager,
    retry: ApiRetry,
    timeoutMs: number,
    log: Logger,
  ) {
    this.#nc = nc;
    this.#log = log;
    this.#js = js;
    this.#jsm = jsm;
    this.#retry = retry;
    this.#timeoutMs = timeoutMs;
    void this.#watch();
  }

  get maxPayload(): number {
    return this.#nc.info?.max_payload ?? 1024 * 1024;
  }

  /** The client's status events, as connection states: it reconnects on its own, or gives up. */
  async #watch(): Promise<void> {
    (async () => {
      for await (const status of this.#nc.status()) {
        if (status.type === "disconnect") {
          this.#away = `disconnected from ${status.server}`;
          this.states.report(this, {
            state: "reconnecting",
            reason: `disconnected from ${status.server}`,
          });
        } else if (status.type === "reconnecting") {
          this.states.report(this, { state: "reconnecting", reason: "reconnecting" });
        } else if (status.type === "reconnect") {
          this.#away = undefined;
          this.states.report(this, { state: "connected" });
        } else if (
          status.type === "error" &&
          status.error instanceof PermissionViolationError &&
          status.error.operation === "publish"
        ) {
          this.#pullRefusals.heard(status.error);
        }
      }
    })().catch(() => undefined);
    const error = await this.#nc.closed();
    if (this.#closing) return;
    this.states.report(this, {
      state: "lost",
      reason:
        error instanceof Error
          ? error.message
          : "the client closed the connection and gave up reconnecting",
    });
  }

  publish(frame: Frame): void {
    const h = natsHeadersOf(frame);
    this.#nc.publish(frame.subject, frame.payload, {
      ...(h === undefined ? {} : { headers: h }),
      ...(frame.reply === undefined ? {} : { reply: frame.reply }),
    });
  }

  async flush(): Promise<void> {
    await this.#nc.flush();
  }

  async settlementsWritten(): Promise<void> {
    this.#held.write();
    if (this.#nc.isClosed()) return;
    // A round trip even with nothing held: what the turn's end handed over may still sit in the
    // socket's buffer, which the client's close discards. The server has processed them once it
    // answers. Bounded as a request is: a connection away keeps the answer back until it is back
    // (the server then delivers the unsettled again once their ack wait passes).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#nc.flush().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  listen(
    subject: string,
    queue: string | undefined,
    onMessage: (message: Received) => void,
  ): Listener {
    const sub = this.#nc.subscribe(subject, {
      ...(queue === undefined ? {} : { queue }),
      callback: (error, m) => {
        if (error === null) onMessage(received(m));
      },
    });
    return { close: () => sub.unsubscribe() };
  }

  async publishStored(frame: Frame): Promise<PubAck> {
    const h = natsHeadersOf(frame);
    try {
      const ack = await this.#js.publish(
        frame.subject,
        frame.payload,
        h === undefined ? {} : { headers: h },
      );
      return { stream: ack.stream, sequence: BigInt(ack.seq), duplicate: ack.duplicate };
    } catch (error) {
      throw publishError(frame.subject, error);
    }
  }

  async publishAtomic(frames: readonly Frame[]): Promise<PubAck> {
    const [first, ...rest] = frames;
    const last = rest.pop();
    if (first === undefined || last === undefined) {
      if (first !== undefined) return this.publishStored(first);
      throw new RustStreamError("invalid-argument", "an atomic batch needs a message or more");
    }
    const options = (frame: Frame) => {
      const h = natsHeadersOf(frame);
      return h === undefined ? {} : { headers: h };
    };
    try {
      const batch = await this.#js.startBatch(first.subject, first.payload, options(first));
      for (const frame of rest) batch.add(frame.subject, frame.payload, options(frame));
      const ack = await batch.commit(last.subject, last.payload, options(last));
      return { stream: ack.stream, sequence: BigInt(ack.seq), duplicate: ack.duplicate };
    } catch (error) {
      // The client's word for a batch the stream refused whole (an expectation of one of its
      // messages): atomic, so nothing of it was stored.
      if (/batch didn't contain/.test(String(error))) {
        throw new RustStreamError(
          "publish-refused",
          `the stream refused the atomic batch for "${first.subject}" (nothing of it was stored): ${(error as Error).message}`,
          { cause: error },
        );
      }
      throw publishError(first.subject, error);
    }
  }

  async ensureStream(
    stream: string,
    subjects: readonly string[],
    declaration: StreamDeclaration | undefined,
  ): Promise<void> {
    await this.#ensure(`the JetStream stream "${stream}"`, stream, () => {
      if (declaration === undefined) {
        throw new RustStreamError(
          "invalid-argument",
          `the JetStream stream "${stream}" does not exist: create it (nats stream add), or let the subscription declare it with JetStreamSubject's declare option ({ declare: { subjects, storage, ... } })`,
        );
      }
      return this.#declareStream(stream, subjects, declaration);
    });
  }

  /**
   * Looks the stream up, and calls `missing` when the server has no such stream: it declares it,
   * or throws what names the option that would. Retried as one on a transient failure, so a
   * declaration whose answer timed out is looked up again before anything is created twice.
   */
  async #ensure(what: string, stream: string, missing: () => Promise<unknown>): Promise<void> {
    await this.#retry.run(
      {
        what: `looking up ${what}`,
        check: `that the cluster has a JetStream meta leader and that most of the stream's replicas run (nats server report jetstream; nats stream info ${stream})`,
      },
      async () => {
        try {
          await this.#jsm.streams.info(stream);
          return;
        } catch (error) {
          if (!isApiError(error, 10059)) throw error;
        }
        await missing();
      },
    );
  }

  async #declareStream(
    stream: string,
    subjects: readonly string[],
    declaration: StreamDeclaration,
  ): Promise<void> {
    await this.#jsm.streams.add({
      name: stream,
      subjects: [...(declaration.subjects ?? subjects)],
      retention:
        declaration.retention === "interest"
          ? RetentionPolicy.Interest
          : declaration.retention === "workqueue"
            ? RetentionPolicy.Workqueue
            : RetentionPolicy.Limits,
      storage: declaration.storage === "memory" ? StorageType.Memory : StorageType.File,
      num_replicas: declaration.replicas ?? 1,
      ...(declaration.maxMessages === undefined ? {} : { max_msgs: declaration.maxMessages }),
      ...(declaration.maxBytes === undefined ? {} : { max_bytes: declaration.maxBytes }),
      ...(declaration.maxAgeMs === undefined ? {} : { max_age: nanos(declaration.maxAgeMs) }),
      ...(declaration.duplicateWindowMs === undefined
        ? {}
        : { duplicate_window: nanos(declaration.duplicateWindowMs) }),
      ...(declaration.atomicPublish === true ? { allow_atomic: true } : {}),
      ...(declaration.messageTtl === true ? { allow_msg_ttl: true } : {}),
      ...(declaration.messageSchedules === true ? { allow_msg_schedules: true } : {}),
    });
  }

  async ensureBucket(bucket: string, declaration: KvBucketDeclaration | undefined): Promise<void> {
    await this.#ensure(`the KV bucket "${bucket}"`, kvStream(bucket), () => {
      if (declaration === undefined) throw missingBucket(bucket);
      return this.#declareBucket(bucket, declaration);
    });
  }

  async #declareBucket(bucket: string, declaration: KvBucketDeclaration): Promise<void> {
    // The KV client writes the stream's settings a bucket needs (rollups, per-key history, direct
    // gets), as every client that reads the bucket expects them.
    const { Kvm } = await loadKv();
    await new Kvm(this.#js).create(bucket, {
      ...(declaration.history === undefined ? {} : { history: declaration.history }),
      ...(declaration.storage === undefined
        ? {}
        : { storage: declaration.storage === "memory" ? StorageType.Memory : StorageType.File }),
      ...(declaration.replicas === undefined ? {} : { replicas: declaration.replicas }),
      ...(declaration.maxBytes === undefined ? {} : { max_bytes: declaration.maxBytes }),
      ...(declaration.maxValueSize === undefined ? {} : { maxValueSize: declaration.maxValueSize }),
      ...(declaration.ttlMs === undefined ? {} : { ttl: declaration.ttlMs }),
      // The client allows a message's TTL (allow_msg_ttl) with the markers' TTL.
      ...(declaration.markerTtlMs === undefined ? {} : { markerTTL: declaration.markerTtlMs }),
    });
  }

  async ensureObjectStore(
    bucket: string,
    declaration: ObjectStoreDeclaration | undefined,
  ): Promise<void> {
    await this.#ensure(`the object store "${bucket}"`, objStream(bucket), () => {
      if (declaration === undefined) throw missingObjectStore(bucket);
      return this.#declareObjectStore(bucket, declaration);
    });
  }

  async #declareObjectStore(bucket: string, declaration: ObjectStoreDeclaration): Promise<void> {
    const { Objm } = await loadObj();
    await new Objm(this.#js).create(bucket, {
      ...(declaration.storage === undefined
        ? {}
        : { storage: declaration.storage === "memory" ? StorageType.Memory : StorageType.File }),
      ...(declaration.replicas === undefined ? {} : { replicas: declaration.replicas }),
      ...(declaration.maxBytes === undefined ? {} : { max_bytes: declaration.maxBytes }),
      ...(declaration.ttlMs === undefined ? {} : { ttl: nanos(declaration.ttlMs) }),
    });
  }

  async putObject(
    bucket: string,
    name: string,
    content: Uint8Array,
  ): Promise<{ info: NatsObjectInfo; revision: bigint }> {
    const { Objm } = await loadObj();
    const store = await new Objm(this.#js).open(bucket);
    try {
      const info = await store.putBlob({ name }, content);
      // The client's info is an object of getters: its fields, as the store holds them.
      return {
        info: {
          name: info.name,
          bucket: info.bucket,
          nuid: info.nuid,
          size: info.size,
          chunks: info.chunks,
          digest: info.digest,
          deleted: info.deleted,
          mtime: info.mtime,
        },
        revision: BigInt(info.revision),
      };
    } catch (error) {
      throw publishError(`the object "${name}" of "${bucket}"`, error);
    }
  }

  async readObject(info: NatsObjectInfo, maxBytes: number): Promise<Uint8Array> {
    assertReadable(info, maxBytes);
    const chunks: Uint8Array[] = [];
    if (info.chunks === 0) return joinChunks(info, chunks);
    const stream = objStream(info.bucket);
    const subject = objChunkSubject(info.bucket, info.nuid);
    // The chunks this version still has: a version replaced or deleted since has none, and a read
    // would wait for chunks that never come.
    const held = (await this.#jsm.streams.info(stream, { subjects_filter: subject })).state
      .subjects?.[subject];
    if (held !== info.chunks) return joinChunks(info, chunks);
    const consumer = await this.#js.consumers.get(stream, { filter_subjects: [subject] });
    const messages = await consumer.fetch({ max_messages: info.chunks, expires: 5000 });
    let size = 0;
    for await (const m of messages) {
      size += m.data.length;
      // Never past the size the info gave: a version that grew is not read on.
      if (size > info.size) break;
      chunks.push(m.data);
      if (chunks.length === info.chunks) break;
    }
    return joinChunks(info, chunks);
  }

  async message(
    stream: string,
    query: MessageQuery,
    direct = false,
  ): Promise<SubjectMessage | undefined> {
    const request =
      "lastOn" in query
        ? { last_by_subj: query.lastOn }
        : "sequence" in query
          ? { seq: Number(query.sequence) }
          : { next_by_subj: query.nextOn, seq: Number(query.from) };
    // A direct get is answered by any replica (one may be behind the leader, as the KV clients
    // accept); else by the stream's leader, which answers with what was stored last.
    const api = direct ? this.#jsm.direct : this.#jsm.streams;
    const sm = await api.getMessage(stream, request).catch((error: unknown) => {
      throw new RustStreamError(
        "broker-failure",
        `reading ${describeQuery(query)} from the stream "${stream}" failed: ${(error as Error).message}`,
        { cause: error },
      );
    });
    return sm === null ? undefined : subjectMessageOf(sm, direct);
  }

  async messages(stream: string, query: BatchQuery): Promise<SubjectMessage[] | undefined> {
    const read = async (request: () => Promise<AsyncIterable<StoredMsg>>) => {
      const messages: StoredMsg[] = [];
      try {
        for await (const sm of await request()) messages.push(sm);
      } catch (error) {
        const status = (error as { code?: unknown }).code;
        // No message matches: none to read.
        if (status === 404) return messages;
        // More subjects than the server answers at once: the caller reads them otherwise.
        if (status === 413) return undefined;
        throw new RustStreamError(
          "broker-failure",
          `a direct batch get of ${"lastOf" in query ? `the last messages on "${query.lastOf}"` : `the messages on "${query.nextOn}"`} from the stream "${stream}" failed: ${(error as Error).message}`,
          { cause: error },
        );
      }
      return messages;
    };
    if ("lastOf" in query) {
      const last = await read(() =>
        this.#jsm.direct.getLastMessagesFor(stream, { multi_last: [query.lastOf] }),
      );
      // An answer cut short (past the request's byte limit) says more were pending: read otherwise.
      if (last === undefined || (last.length > 0 && last.at(-1)?.pending !== 0)) return undefined;
      return last.map((sm) => subjectMessageOf(sm, true));
    }
    // A batch ends where the server's answer does; its last message says how many more follow.
    const all: SubjectMessage[] = [];
    for (let from = query.from; ; ) {
      const batch =
        (await read(() =>
          this.#jsm.direct.getBatch(stream, {
            next_by_subj: query.nextOn,
            seq: Number(from),
            batch: DIRECT_BATCH,
          }),
        )) ?? [];
      for (const sm of batch) all.push(subjectMessageOf(sm, true));
      const last = batch.at(-1);
      if (last === undefined || last.pending === 0) return all;
      from = BigInt(last.seq) + 1n;
    }
  }

  async allowsDirect(stream: string): Promise<boolean> {
    return (await this.#jsm.streams.info(stream)).config.allow_direct === true;
  }

  async purgeSubject(stream: string, subject: string, before?: bigint): Promise<number> {
    const { purged } = await this.#jsm.streams.purge(
      stream,
      before === undefined ? { filter: subject } : { filter: subject, seq: Number(before) },
    );
    return purged;
  }

  async streamOf(subject: string): Promise<string> {
    try {
      return await this.#jsm.streams.find(subject);
    } catch (error) {
      // The client's word when no stream, or more than one, answers for the subject.
      if (/no stream matches subject/.test(String(error))) throw noStreamStores(subject, error);
      throw error;
    }
  }

  async subjects(stream: string, filter: string): Promise<string[]> {
    // The client asks for the pages of a long list one after another.
    const info = await this.#jsm.streams.info(stream, { subjects_filter: filter });
    return Object.keys(info.state.subjects ?? {});
  }

  async streamBounds(stream: string): Promise<{ first: bigint; last: bigint }> {
    const info = await this.#jsm.streams.info(stream);
    return { first: BigInt(info.state.first_seq), last: BigInt(info.state.last_seq) };
  }

  async unpin(stream: string, consumer: string, group: string): Promise<boolean> {
    const ref: PinnedGroupRef = { stream, consumer, group };
    const refused = (error: unknown) => {
      if (isApiError(error, 10059)) return unpinRefused.noStream(ref, error);
      if (isApiError(error, 10014)) return unpinRefused.noConsumer(ref, error);
      return error;
    };
    const info = await this.#jsm.consumers.info(stream, consumer).catch((error: unknown) => {
      throw refused(error);
    });
    // The server unpins a group of any policy (nothing to do but for a pinned one), and answers
    // one the consumer lacks "does not exist" (10160) without naming the groups it has.
    const config = info.config as { priority_groups?: string[]; priority_policy?: string };
    const groups = config.priority_groups ?? [];
    if (!groups.includes(group)) throw unpinRefused.noGroup(ref, groups);
    if (config.priority_policy !== "pinned_client")
      throw unpinRefused.notPinned(ref, config.priority_policy ?? "none");
    const held = pinnedClient(info, group) !== undefined;
    await this.#jsm.consumers.unpin(stream, consumer, group).catch((error: unknown) => {
      throw refused(error);
    });
    return held;
  }

  async consumer(spec: ConsumerSpec): Promise<ConsumerLink> {
    const named =
      spec.ordered === true
        ? `an ordered consumer on the JetStream stream "${spec.stream}"`
        : spec.durable === undefined
          ? `an ephemeral consumer on the JetStream stream "${spec.stream}"`
          : `the consumer "${spec.durable}" on the JetStream stream "${spec.stream}"`;
    const call = (verb: string, check: string): RetriedCall => ({
      what: `${verb} ${named}`,
      check: `that the cluster has a JetStream meta leader and that most of the stream's replicas run (nats server report jetstream; ${check})`,
    });
    if (spec.settings.push !== undefined) return this.#pushConsumer(spec, spec.settings.push, call);
    if (spec.ordered === true) {
      const creating = call("creating", `nats consumer ls ${spec.stream}`);
      return orderedConsumer(
        this.#js,
        (create) => this.#retry.run(creating, create),
        spec,
        this.#pullRefusals,
        this.#awayOf,
      );
    }
    // A durable's creation with the same settings is answered with the consumer as it is, so a
    // creation whose answer timed out is asked again safely. An ephemeral one the server made
    // before such a timeout is left to its inactive threshold, as nobody pulls from it.
    const info = await this.#retry.run(
      call("creating", `nats consumer ls ${spec.stream}`),
      async () => {
        if (spec.replace && spec.durable !== undefined)
          await this.#deleteDurable(spec.stream, spec.durable);
        return this.#jsm.consumers
          .add(spec.stream, consumerConfig(spec))
          .catch(async (error: unknown) => {
            // The error itself, not a promise of it: the retry reads whether it is transient.
            throw spec.durable === undefined
              ? error
              : await this.#existingDiffers(spec.stream, spec.durable, spec.settings, error);
          });
      },
    );
    const consumer = await this.#retry.run(
      call("looking up", `nats consumer info ${spec.stream} ${info.name}`),
      () => this.#lookUpCreated(spec.stream, info.name),
    );
    const jsm = this.#jsm;
    const away = this.#awayOf;
    const durable = spec.durable !== undefined;
    const refusals = this.#pullRefusals;
    const held = this.#held;
    const pin =
      spec.settings.priority?.policy === "pinned"
        ? new HeldPin(this.#log, {
            stream: spec.stream,
            consumer: info.name,
            group: spec.settings.priority.group,
          })
        : undefined;
    return {
      name: info.name,
      pull(max, expiresMs, sink): PullRequest {
        return pullLoop(
          {
            stream: spec.stream,
            name: () => info.name,
            // A consumer the server no longer has ends the pulls (abort_on_missing_resource), as
            // a failure.
            consume: (max_messages, expires) =>
              consumer.consume({
                max_messages,
                expires,
                abort_on_missing_resource: true,
                ...priorityPull(spec.settings.priority),
              }),
            message: (m) => new ClientStored(m, held),
            status: (status) => pin?.heard(status),
          },
          max,
          expiresMs,
          sink,
          refusals,
        );
      },
      ...settledConsumer(jsm, held, away, spec.stream, info.name, async () => {
        const id = pin?.id;
        if (pin !== undefined && id !== undefined) pin.letGo(await giveUpPin(jsm, pin, id));
        if (durable) return;
        await jsm.consumers.delete(spec.stream, info.name).catch(() => undefined);
      }),
    };
  }

  /**
   * A durable push consumer, bound to as it is at the server (or created from its declaration
   * when missing and declared, and deleted first when a seek replaces it), or an ephemeral one
   * created from its declaration: the server pushes its messages to the deliver subject, and they
   * are settled as a pull consumer's. Refused when it is a pull consumer, or one the subscription
   * cannot settle (another ack policy or ack wait).
   */
  async #pushConsumer(
    spec: ConsumerSpec,
    push: PushSettings,
    call: (verb: string, check: string) => RetriedCall,
  ): Promise<ConsumerLink> {
    const { stream, durable } = spec;
    const create = (declared: PushDeclaration) =>
      this.#jsm.consumers.add(stream, {
        ...consumerConfig(spec),
        deliver_subject: declared.deliverSubject,
        ...(declared.deliverGroup === undefined ? {} : { deliver_group: declared.deliverGroup }),
        ...(declared.idleHeartbeatMs === undefined
          ? {}
          : { idle_heartbeat: nanos(declared.idleHeartbeatMs) }),
        ...(declared.flowControl === true ? { flow_control: true } : {}),
      });
    if (durable === undefined) {
      if (push === "bind") throw new Error("push: true names a durable (checked by its source)");
      // An ephemeral one is the subscription's own: created each time, deleted at its close (and
      // by the server after its inactive threshold once nothing listens on its deliver subject).
      // A creation whose answer timed out leaves one nobody listens to, for that threshold.
      // Without a deliver subject given, a fresh inbox of this connection's at each creation:
      // nothing else listens there, and a consumer made again (a seek, one lost) gets its own.
      const deliverSubject = push.deliverSubject ?? this.inbox();
      const info = await this.#retry.run(call("creating", `nats consumer ls ${stream}`), () =>
        create({ ...push, deliverSubject }),
      );
      // Another subscription's deliver subject: the server would push each message to both.
      if (info.push_bound === true) {
        await this.#jsm.consumers.delete(stream, info.name).catch(() => undefined);
        throw pushConsumerTaken(stream, undefined, deliverSubject);
      }
      return this.#pushLink(stream, info.name, false);
    }
    const info = await this.#retry.run(
      call("binding to", `nats consumer info ${stream} ${durable}`),
      async () => {
        // A seek's: the declared consumer made again at its position.
        if (spec.replace && push !== "bind") await this.#deleteDurable(stream, durable);
        const existing = await this.#jsm.consumers.info(stream, durable).catch((error: unknown) => {
          if (isApiError(error, 10014)) return undefined;
          throw error;
        });
        if (existing !== undefined) return existing;
        if (push === "bind") throw pushConsumerMissing(stream, durable);
        const { deliverSubject } = push;
        if (deliverSubject === undefined)
          throw new Error(
            "a durable push consumer names its deliver subject (checked by its source)",
          );
        return create({ ...push, deliverSubject });
      },
    );
    if (typeof info.config.deliver_subject !== "string")
      throw wrongConsumerKind(stream, durable, false);
    const unfit = pushConsumerUnfit(
      stream,
      durable,
      info.config.ack_policy,
      Math.round((info.config.ack_wait ?? nanos(30_000)) / 1_000_000),
      spec.settings.ackWaitMs,
    );
    if (unfit !== undefined) throw unfit;
    // Without a deliver group the deliver subject is one app's: the server would push each
    // message to both, and the client refuses a second binding.
    if (info.push_bound === true && info.config.deliver_group === undefined)
      throw pushConsumerTaken(stream, durable, info.config.deliver_subject);
    return this.#pushLink(stream, durable, true);
  }

  /** The link to a push consumer the server has: a durable stays with the server at its close. */
  async #pushLink(stream: string, name: string, durable: boolean): Promise<ConsumerLink> {
    const consumer = await this.#js.consumers.getPushConsumer(stream, name);
    const refusals = this.#pullRefusals;
    const held = this.#held;
    const nc = this.#nc;
    const jsm = this.#jsm;
    return {
      name,
      // The server pushes: `max` and `expiresMs` ask nothing of it. It holds back once the
      // consumer's max_ack_pending are unsettled, and the loop's wait for the subscription's room
      // holds back the answers to its flow control (with `flowControl`).
      pull(_max, _expiresMs, sink): PullRequest {
        return pullLoop(
          {
            stream,
            name: () => name,
            push: true,
            consume: async () => {
              const messages = await consumer.consume({ abort_on_missing_resource: true });
              // The server tells a push consumer's listeners nothing when it is deleted (a pull
              // consumer's requests are answered 409): its advisory ends the pushes, as a pull
              // consumer's answer ends its pulls, so the subscription looks for it again.
              const deleted = nc.subscribe(
                `$JS.EVENT.ADVISORY.CONSUMER.DELETED.${stream}.${name}`,
                {
                  callback: (error) => {
                    if (error === null)
                      messages.stop(new Error(`the push consumer "${name}" was deleted`));
                  },
                },
              );
              void messages.closed().finally(() => deleted.unsubscribe());
              return messages;
            },
            message: (m) => new ClientStored(m, held),
          },
          0,
          0,
          sink,
          refusals,
        );
      },
      ...settledConsumer(jsm, held, this.#awayOf, stream, name, async () => {
        if (durable) return;
        await jsm.consumers.delete(stream, name).catch(() => undefined);
      }),
    };
  }

  inbox(): string {
    return createInbox();
  }

  /**
   * What a refused creation of a durable says when the durable is there with another priority
   * group: the difference, by name (the server's own answer says only that it exists).
   */
  async #existingDiffers(
    stream: string,
    durable: string,
    settings: ConsumerSettings,
    error: unknown,
  ): Promise<unknown> {
    if (!(error instanceof JetStreamApiError)) return error;
    const existing = await this.#jsm.consumers.info(stream, durable).catch(() => undefined);
    // A push consumer of the name: the server's answer says only that it differs.
    if (typeof existing?.config.deliver_subject === "string")
      return wrongConsumerKind(stream, durable, true, error);
    if (!isApiError(error, 10148)) return error;
    const difference =
      existing === undefined ? undefined : priorityDifference(existing.config, settings.priority);
    if (difference === undefined) return error;
    return otherPriorityGroup(stream, durable, difference, error);
  }

  async #deleteDurable(stream: string, durable: string): Promise<void> {
    await this.#jsm.consumers.delete(stream, durable).catch((error: unknown) => {
      if (!isApiError(error, 10014)) throw error;
    });
  }

  /**
   * The consumer the server has just created. A replica whose Raft node for it does not run yet
   * answers its lookup "consumer not found" (10014) while the group forms: transient here, where
   * the creation was answered a moment ago.
   */
  async #lookUpCreated(stream: string, name: string) {
    try {
      return await this.#js.consumers.get(stream, name);
    } catch (error) {
      if (!isApiError(error, 10014)) throw error;
      throw new TransientAnswer(
        `the server answered "consumer not found" (10014) right after creating it: its Raft group is not formed yet`,
        error,
      );
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    // The client drops what it has not written when it closes: the settlements go out before.
    await this.settlementsWritten();
    await this.#nc.close();
  }
}

import {
  type Broker,
  type Clock,
  type ClosedBroker,
  type ConnectedBroker,
  type ConnectOptions,
  type DescribesServer,
  type Logger,
  type OutgoingMessage,
  RustStreamError,
  type ServerDescription,
  systemClock,
  type TlsOptions,
} from "@ruststream/core";
import {
  type Backlog,
  brokerMark,
  describeMark,
  type Injection,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  type PendingReply,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import type { PulsarDelivery } from "./delivery/pulsarDelivery.js";
import { type DeadLetterPolicy, SharedDelivery } from "./delivery/sharedDelivery.js";
import { SingleDelivery } from "./delivery/singleDelivery.js";
import { undecodableCopy } from "./delivery/undecodableCopy.js";
import type { PulsarHost } from "./host.js";
import type { InProcessPulsar, InProcessSettings } from "./inProcess/inProcessPulsar.js";
import { ClientLink } from "./link/clientLink.js";
import type { Link, LinkProducer } from "./link/link.js";
import { retryTopic } from "./names.js";
import {
  type PreparedMessage,
  type ProducerKey,
  type PublisherHost,
  PulsarPublish,
  type PulsarPublisher,
  type PulsarPublishOptions,
  prepareMessage,
  sendPrepared,
} from "./publisher.js";
import { PulsarShared, type PulsarSharedSource, type PulsarSource } from "./sources.js";
import { PulsarSubscription } from "./subscription/pulsarSubscription.js";
import { Readers } from "./subscription/readers.js";
import { ReplyInbox } from "./subscription/replyInbox.js";
import type { TokenSource } from "./wire/connection.js";
import { type BrokerAddress, parseServiceUrl } from "./wire/serviceUrl.js";
import type { UndecodableHandler } from "./wire/undecodable.js";

export interface PulsarBrokerOptions {
  /** `pulsar://host:6650`, or `pulsar+ssl://host:6651` for TLS; several hosts separated by commas. */
  readonly url: string;
  /**
   * Token authentication: the token (a JWT the broker's key signed), or a function giving the
   * current one (asked again when the broker challenges). Never shown in descriptions or logs.
   */
  readonly token?: TokenSource;
  /** TLS for `pulsar+ssl://`: `ca` (the CA that signed the broker's certificate), `cert`, `key`... */
  readonly tls?: TlsOptions;
  /**
   * The subscription of bare names and of Shared and Key_Shared descriptors that name none, the
   * same in every replica so they share the work. Default: the name of the app that connects.
   */
  readonly subscription?: string;
  /** Creating a producer or consumer, lookups and retries included (default 30 s). */
  readonly operationTimeoutMs?: number;
  /** TCP connect plus handshake (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** The namespace of the reply topics requests create (default `public/default`). */
  readonly inboxNamespace?: string;
  /**
   * A producer nothing published through for this long is closed (default 5 minutes), so a
   * responder answering many requesters' reply topics does not keep a producer for each forever.
   */
  readonly producerIdleMs?: number;
  /** Where request timeouts take time from (the in-process mode uses the test's clock). */
  readonly clock?: Clock;
  /**
   * Where the connection reports what no delivery carries to the app: an entry a consumer cannot
   * decode, at error. Default: the logger of the app that connects, else core's console logger.
   */
  readonly logger?: Logger;
  /** The in-process stand-in's own settings: what a real broker learns from its cluster. */
  readonly inProcess?: InProcessSettings;
}

/**
 * What shutting down a Pulsar connection left behind: `unflushed` counts publishes sent and not yet
 * confirmed by the broker when the connection closed, and `returnedDeliveries` the deliveries handed
 * out and not acked, which the broker delivers again once their consumers closed.
 */
export type ClosedPulsarBroker = ClosedBroker;

function describePulsar(addresses: readonly BrokerAddress[], version?: string): ServerDescription {
  return {
    protocol: addresses[0]?.tls === true ? "pulsar+ssl" : "pulsar",
    host: addresses.map((a) => `${a.host}:${a.port}`).join(","),
    ...(version === undefined ? {} : { protocolVersion: version }),
  };
}

/**
 * A Pulsar broker before it connects: the constructor only checks and records its configuration.
 * `connect()` opens the first connection (handshake, token, TLS); `connectInProcess()` runs the
 * same descriptors against an in-process stand-in of the broker, for tests.
 */
export class PulsarBroker
  implements Broker<ConnectedPulsarBroker>, InProcessBroker<ConnectedPulsarBroker>, DescribesServer
{
  readonly [brokerMark] = "pulsar";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: PulsarBrokerOptions;
  readonly #addresses: readonly BrokerAddress[];
  #inProcess: InProcessPulsar | undefined;

  constructor(options: PulsarBrokerOptions) {
    if (typeof options?.url !== "string") {
      throw new RustStreamError(
        "invalid-argument",
        'PulsarBroker needs a url: new PulsarBroker({ url: "pulsar://127.0.0.1:6650" })',
      );
    }
    this.#addresses = parseServiceUrl(options.url);
    if (options.subscription !== undefined && options.subscription.length === 0) {
      throw new RustStreamError(
        "invalid-argument",
        "subscription cannot be empty: give the name the replicas share",
      );
    }
    const sizes = options.inProcess?.partitionedTopics ?? {};
    for (const [topic, partitions] of Object.entries(sizes)) {
      if (!Number.isSafeInteger(partitions) || partitions < 1) {
        throw new RustStreamError(
          "invalid-argument",
          `inProcess.partitionedTopics["${topic}"]: ${partitions}; give 1 or more partitions`,
        );
      }
    }
    this.#options = options;
  }

  /** The server as configured, before connecting: scheme and hosts, never the token. */
  describeServer(): ServerDescription {
    return describePulsar(this.#addresses);
  }

  async connect(options?: ConnectOptions): Promise<ConnectedPulsarBroker> {
    const o = this.#options;
    const link = await ClientLink.open({
      serviceUrl: o.url,
      ...(o.token === undefined ? {} : { token: o.token }),
      ...(o.tls === undefined ? {} : { tls: o.tls }),
      ...(o.operationTimeoutMs === undefined ? {} : { operationTimeoutMs: o.operationTimeoutMs }),
      ...(o.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: o.connectTimeoutMs }),
      ...logger(o.logger ?? options?.logger),
    });
    const version = /(\d+\.\d+(?:\.\d+)?)/.exec(link.serverVersion)?.[1];
    return new ConnectedPulsarBroker(link, o, {
      clock: o.clock ?? systemClock,
      now: () => Date.now(),
      subscription: o.subscription ?? options?.app?.name,
      description: describePulsar(this.#addresses, version),
      inProcess: undefined,
    });
  }

  /**
   * The in-process mode: the same descriptors, policies and settlement code against a stand-in of
   * the broker that lives in this broker object (so a second connection sees what the first left).
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedPulsarBroker> {
    const { InProcessPulsar } = await import("./inProcess/inProcessPulsar.js");
    this.#inProcess ??= new InProcessPulsar(this.#options.inProcess ?? {});
    const server = this.#inProcess;
    server.attach(options.clock, options.coordinator);
    return new ConnectedPulsarBroker(server.link(), this.#options, {
      clock: options.clock,
      now: () => server.now(),
      subscription: this.#options.subscription ?? options.app?.name,
      description: { protocol: "pulsar", description: "in-process stand-in of a Pulsar broker" },
      inProcess: server,
    });
  }
}

interface ConnectionFacts {
  readonly clock: Clock;
  readonly now: () => number;
  /** The subscription option, else the connecting app's name. */
  readonly subscription: string | undefined;
  readonly description: ServerDescription;
  readonly inProcess: InProcessPulsar | undefined;
}

/** A connection to Pulsar. After `shutdown()` every method, and every handle it made, rejects `closed`. */
export class ConnectedPulsarBroker
  extends TestableConnection<PulsarSource, ClosedPulsarBroker, PulsarPublishOptions>
  implements
    ConnectedBroker<PulsarSource, PulsarDelivery, PulsarPublisher, ClosedPulsarBroker>,
    DescribesServer,
    PulsarHost,
    PublisherHost
{
  readonly [brokerMark] = "pulsar";
  readonly [describeMark] = true as const;
  /** A new subscription starts at the end of its topic (`initialPosition: "latest"`, the default). */
  readonly backlog: Backlog = "missed";
  readonly inflight = { count: 0 };
  readonly #link: Link;
  readonly #facts: ConnectionFacts;
  readonly #inbox: ReplyInbox;
  readonly #producers = new Map<string, { producer: Promise<LinkProducer>; used: number }>();
  readonly #sweep: NodeJS.Timeout | undefined;
  readonly #readers: Readers;

  constructor(link: Link, options: PulsarBrokerOptions, facts: ConnectionFacts) {
    super(
      {
        label: "Pulsar",
        accepts: "a name, PulsarShared, PulsarKeyShared, PulsarExclusive or PulsarFailover",
        group: {
          noun: "subscription",
          option: "subscription",
          broker: "PulsarBroker",
          descriptor: "PulsarShared",
        },
        // Closing the consumers sends their pending acks first, over a server that may have
        // stopped answering: the wait is bounded, and what stays unacked goes back.
        takeBackWithinMs: 5000,
      },
      facts.inProcess !== undefined,
    );
    this.#link = link;
    this.#facts = facts;
    this.#inbox = new ReplyInbox(link, facts.clock, options.inboxNamespace ?? "public/default");
    this.#readers = new Readers(link);
    const idleMs = options.producerIdleMs ?? 300_000;
    if (facts.inProcess === undefined && idleMs > 0) {
      this.#sweep = setInterval(() => this.#closeIdleProducers(idleMs), Math.min(idleMs, 60_000));
      this.#sweep.unref();
    }
  }

  /** A bare name is a Shared subscription under the broker's subscription name (else the app's). */
  source(name: string): PulsarShared {
    return new PulsarShared(name, { subscription: this.groupOf(name, this.#facts.subscription) });
  }

  async subscribe(source: string | PulsarSource): Promise<PulsarSubscription> {
    this.assertOpen();
    const descriptor = this.descriptorOf(source);
    const subscription = this.groupOf(
      descriptor.name,
      descriptor.subscription ?? this.#facts.subscription,
    );
    const retry = descriptor.readsRetryTopic
      ? retryTopic(descriptor.topic, subscription)
      : undefined;
    const deadLetter =
      descriptor.copies === "broker" ? deadLetterOf(descriptor, subscription) : undefined;
    const { reader, release } = await this.#readers.open(
      descriptor,
      subscription,
      retry,
      deadLetter === undefined
        ? undefined
        : this.#undecodableTo(deadLetter, { name: descriptor.name, retryTopic: retry }),
    );
    return this.adopt(
      new PulsarSubscription(this, reader, {
        name: descriptor.name,
        topic: descriptor.topic,
        subscription,
        retryTopic: retry,
        deadLetter,
        deliver:
          descriptor.copies === "broker"
            ? (owner, r) => new SharedDelivery(owner, r.message, r.retry)
            : (owner, r) => new SingleDelivery(owner, r.message, r.retry),
        release,
      }),
    );
  }

  defaultPublishPolicy(): PulsarPublish {
    return new PulsarPublish();
  }

  /**
   * Where a subscription's consumers send the entries they cannot decode: its dead letter, as
   * the entries arrived, through the copies' producer (which creates the dead letter's
   * subscription with the topic). Never handed out, so the runtime's dead letter cannot see them.
   */
  #undecodableTo(
    deadLetter: DeadLetterPolicy,
    source: { readonly name: string; readonly retryTopic: string | undefined },
  ): UndecodableHandler {
    return {
      destination: deadLetter.topic,
      handle: async (entry) => {
        await this.publishCopy(
          undecodableCopy(entry, source, deadLetter.topic),
          deadLetter.initialSubscription,
        );
      },
    };
  }

  describeServer(): ServerDescription {
    return this.#facts.description;
  }

  // PublisherHost and PulsarHost (assertOpen and closedError come from ConnectionBase)

  now(): number {
    return this.#facts.now();
  }

  producer(key: ProducerKey): Promise<LinkProducer> {
    this.assertOpen();
    const id = `${key.topic}\u0000${key.initialSubscription ?? ""}\u0000${JSON.stringify(key.settings)}`;
    const kept = this.#producers.get(id);
    if (kept !== undefined) {
      kept.used = Date.now();
      return kept.producer;
    }
    const settings = key.settings;
    const producer = this.#link.createProducer({
      topic: key.topic,
      // One batch per key by default: Key_Shared subscriptions route a whole entry by its key.
      batching: settings.batching === false ? false : { keyBased: true, ...settings.batching },
      ...(settings.compression === undefined ? {} : { compression: settings.compression }),
      ...(key.initialSubscription === undefined
        ? {}
        : { initialSubscriptionName: key.initialSubscription }),
    });
    const entry = { producer, used: Date.now() };
    this.#producers.set(id, entry);
    producer.catch(() => {
      if (this.#producers.get(id) === entry) this.#producers.delete(id);
    });
    return producer;
  }

  /** Closes the producers nothing used for `idleMs`; a later publish opens a new one. */
  #closeIdleProducers(idleMs: number): void {
    const now = Date.now();
    for (const [id, entry] of this.#producers) {
      if (now - entry.used < idleMs) continue;
      this.#producers.delete(id);
      void entry.producer.then((p) => p.close()).catch(() => undefined);
    }
  }

  publishCopy(
    message: OutgoingMessage<PulsarPublishOptions>,
    initialSubscription: string,
  ): Promise<void> {
    this.assertOpen();
    const prepared = prepareMessage(message, () => this.now());
    this.record(prepared.raw);
    return sendPrepared(this, prepared, {
      topic: prepared.topic,
      initialSubscription,
      settings: {},
    }).then(() => undefined);
  }

  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.assertOpen();
    return this.#inbox.awaitReply(correlationId, timeoutMs);
  }

  protected prepareInjection(message: OutgoingMessage<PulsarPublishOptions>): Injection {
    const publishNow = this.#link.publishNow;
    if (publishNow === undefined) throw this.notInProcess("inject() works");
    const prepared: PreparedMessage = prepareMessage(message, () => this.now());
    return { raw: prepared.raw, deliver: () => publishNow(prepared.topic, prepared.wire) };
  }

  protected async teardown(): Promise<TeardownFacts<ClosedPulsarBroker>> {
    await this.#inbox.stop(this.closedError("request"));
    // Publishes already sent get a moment for their receipts; what is left counts as unflushed.
    clearInterval(this.#sweep);
    const producers = await Promise.allSettled(
      [...this.#producers.values()].map((e) => e.producer),
    );
    await bounded(
      Promise.all(producers.map((p) => (p.status === "fulfilled" ? p.value.flush() : undefined))),
      5000,
    );
    const unflushed = this.inflight.count;
    await bounded(this.#link.close(), 5000);
    return { unflushed };
  }
}

/** The cap and dead letter a Shared or Key_Shared descriptor declares, resolved. */
function deadLetterOf(
  descriptor: PulsarSharedSource,
  subscription: string,
): DeadLetterPolicy | undefined {
  const retry = descriptor.retry;
  if (retry?.maxAttempts === undefined || retry.deadLetter === undefined) return undefined;
  return {
    maxAttempts: retry.maxAttempts,
    topic: retry.deadLetter,
    initialSubscription: descriptor.deadLetterSubscription ?? subscription,
  };
}

/** The client's logger option, where there is one to give. */
function logger(log: Logger | undefined): { logger?: Logger } {
  return log === undefined ? {} : { logger: log };
}

/** Waits for `work` at most `ms`: teardown never hangs on a broker that stopped answering. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

import {
  type Broker,
  type Clock,
  type ClosedBroker,
  type ConnectedBroker,
  type ConnectOptions,
  type DescribesServer,
  type OutgoingMessage,
  RustStreamError,
  type ServerDescription,
  systemClock,
} from "@ruststream/core";
import {
  type Backlog,
  brokerMark,
  type Coordinator,
  describeMark,
  type Injection,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  noCoordinator,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import {
  type RedisConnectionOptions,
  type ResolvedConnection,
  resolveConnection,
} from "./client/connectionOptions.js";
import { IoredisLink } from "./client/ioredisLink.js";
import type { Link } from "./client/link.js";
import type { RedisHost } from "./host.js";
import type { RedisListDelivery } from "./list/listDelivery.js";
import { RedisListSubscription } from "./list/listSubscription.js";
import {
  type PublisherHost,
  RedisPublish,
  RedisPublisher,
  type RedisPublishSettings,
} from "./publisher.js";
import type { RedisPubSubDelivery } from "./pubsub/pubsubDelivery.js";
import { RedisPubSubSubscription } from "./pubsub/pubsubSubscription.js";
import { type RedisSource, RedisStream } from "./sources.js";
import { ReplyInbox } from "./stream/replyInbox.js";
import type { RedisStreamDelivery } from "./stream/streamDelivery.js";
import { RedisStreamSubscription } from "./stream/streamSubscription.js";

/** Every delivery the Redis broker hands out. */
export type RedisDelivery = RedisStreamDelivery | RedisListDelivery | RedisPubSubDelivery;

/** Every subscription the Redis broker opens; only stream subscriptions batch and seek. */
export type RedisSubscription =
  | RedisStreamSubscription
  | RedisListSubscription
  | RedisPubSubSubscription;

export interface RedisBrokerOptions extends RedisConnectionOptions {
  /**
   * The consumer group of bare names and of stream descriptors that name none, the same in every
   * replica so they share the work. Default: the name of the app that connects the broker (a broker
   * connected by hand, outside an app, has none unless given here).
   */
  readonly group?: string;
  /** The largest payload a publish may carry, refused before sending (default 16 MiB). */
  readonly maxMessageBytes?: number;
  /** Approximate `MAXLEN` for every stream append (publishes, retry copies); no trimming by default. */
  readonly maxLen?: number;
  /** Where request timeouts take time from (the in-process mode uses the test's clock). */
  readonly clock?: Clock;
}

/**
 * A Redis broker before it connects: the constructor only checks and records its configuration.
 * `connect()` reaches the server; `connectInProcess()` runs the same descriptors against an
 * in-process stand-in of the server, for tests.
 */
export class RedisBroker
  implements Broker<ConnectedRedisBroker>, InProcessBroker<ConnectedRedisBroker>, DescribesServer
{
  readonly [brokerMark] = "redis";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: RedisBrokerOptions;
  readonly #settings: ResolvedConnection;
  #inProcessServer: import("./inProcess/memoryRedis.js").MemoryRedis | undefined;

  constructor(options: RedisBrokerOptions = {}) {
    const maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1) {
      throw new RustStreamError(
        "invalid-argument",
        `maxMessageBytes: ${options.maxMessageBytes}; give a whole number of bytes, 1 or more`,
      );
    }
    if (
      options.maxLen !== undefined &&
      !(Number.isSafeInteger(options.maxLen) && options.maxLen >= 1)
    ) {
      throw new RustStreamError("invalid-argument", `maxLen: ${options.maxLen}; give 1 or more`);
    }
    if (options.group !== undefined && options.group.length === 0) {
      throw new RustStreamError("invalid-argument", "group cannot be empty: give the app's name");
    }
    this.#options = options;
    this.#settings = resolveConnection(options);
  }

  /** The server as configured, before connecting: scheme and host, never the user or password. */
  describeServer(): ServerDescription {
    return describeRedisServer(this.#settings, undefined);
  }

  async connect(options?: ConnectOptions): Promise<ConnectedRedisBroker> {
    const link = await IoredisLink.connect(this.#settings);
    return new ConnectedRedisBroker(link, this.#options, this.#settings, {
      clock: this.#options.clock ?? systemClock,
      coordinator: noCoordinator,
      group: this.#options.group ?? options?.app?.name,
      version: link.serverVersion,
      inProcess: false,
    });
  }

  /**
   * The in-process mode: the same descriptors, policies and settlement code against a stand-in of
   * the server that lives in this broker object (so a second connection sees what the first left).
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedRedisBroker> {
    const { MemoryRedis } = await import("./inProcess/memoryRedis.js");
    // A broker configured for a cluster gets a stand-in that answers as one where it matters.
    const settings = this.#settings;
    this.#inProcessServer ??= new MemoryRedis(
      settings.kind === "cluster" ? { pubsub: settings.pubsub ?? "sharded" } : undefined,
    );
    this.#inProcessServer.attach(options.clock, options.coordinator);
    return new ConnectedRedisBroker(this.#inProcessServer.link(), this.#options, this.#settings, {
      clock: options.clock,
      coordinator: options.coordinator,
      group: this.#options.group ?? options.app?.name,
      version: undefined,
      inProcess: true,
    });
  }
}

/** The server from its resolved settings, and its version once a connection has read it. */
function describeRedisServer(
  settings: ResolvedConnection,
  version: string | undefined,
): ServerDescription {
  const protocol = settings.tls === undefined ? "redis" : "rediss";
  const protocolVersion = version === undefined ? {} : { protocolVersion: version };
  if (settings.kind === "server") return { protocol, host: settings.address, ...protocolVersion };
  const [first] = settings.address.split(",");
  return {
    protocol,
    ...(first === undefined ? {} : { host: first }),
    ...protocolVersion,
    description:
      settings.kind === "cluster"
        ? `Redis Cluster, seed nodes ${settings.address.split(",").join(", ")}`
        : `Redis master "${settings.name}" through Sentinel, sentinels ${settings.address.split(",").join(", ")}`,
  };
}

/**
 * What shutting down a Redis connection left behind: `unflushed` counts publishes sent and not yet
 * answered by the server when the connection closed, and `returnedDeliveries` the entries read or
 * handed out and never settled, appended back to their streams and lists.
 */
export type ClosedRedisBroker = ClosedBroker;

interface ConnectionFacts {
  readonly clock: Clock;
  readonly coordinator: Coordinator;
  /** The group option, else the connecting app's name. */
  readonly group: string | undefined;
  readonly version: string | undefined;
  readonly inProcess: boolean;
}

/** A connection to Redis. */
export class ConnectedRedisBroker
  extends TestableConnection<RedisSource, ClosedRedisBroker>
  implements
    ConnectedBroker<RedisSource, RedisDelivery, RedisPublisher, ClosedRedisBroker>,
    DescribesServer,
    RedisHost,
    PublisherHost
{
  readonly [brokerMark] = "redis";
  readonly [describeMark] = true as const;
  readonly link: Link;
  readonly maxLen: number | undefined;
  readonly maxMessageBytes: number;
  readonly coordinator: Coordinator;
  readonly #settings: ResolvedConnection;
  readonly #facts: ConnectionFacts;
  readonly #transports = new Map<string, "list" | "pubsub">();
  readonly #inflight = { count: 0 };
  readonly #inbox: ReplyInbox;
  /** What a new subscription to a bare name sees of earlier publishes: a new group starts at `$`. */
  readonly backlog: Backlog = "missed";

  constructor(
    link: Link,
    options: RedisBrokerOptions,
    settings: ResolvedConnection,
    facts: ConnectionFacts,
  ) {
    super(
      {
        label: "Redis",
        accepts: "a name, RedisStream, RedisList or RedisPubSub",
        group: {
          noun: "consumer group",
          option: "group",
          broker: "RedisBroker",
          descriptor: "RedisStream",
        },
      },
      facts.inProcess,
    );
    this.link = link;
    this.#settings = settings;
    this.#facts = facts;
    this.maxLen = options.maxLen;
    this.maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    this.coordinator = facts.coordinator;
    this.#inbox = new ReplyInbox(this, facts.clock);
  }

  /** A bare name is a stream read by the broker's group; without one this says how to give it. */
  source(name: string): RedisStream {
    return new RedisStream(name, { group: this.groupOf(name, this.#facts.group) });
  }

  async subscribe(source: string | RedisSource): Promise<RedisSubscription> {
    this.assertOpen();
    const descriptor = this.descriptorOf(source);
    if (descriptor.transport === "stream") {
      const group = this.groupOf(descriptor.name, descriptor.group ?? this.#facts.group);
      return this.adopt(await RedisStreamSubscription.open(this, descriptor, group));
    }
    if (descriptor.transport === "list") {
      this.#transports.set(descriptor.name, "list");
      return this.adopt(await RedisListSubscription.open(this, descriptor));
    }
    if (descriptor.copies === "addressed") this.#transports.set(descriptor.name, "pubsub");
    return this.adopt(await RedisPubSubSubscription.open(this, descriptor));
  }

  defaultPublishPolicy(): RedisPublish {
    return new RedisPublish();
  }

  /** Used by {@link RedisPublish.pair}. */
  pairPublisher(settings: RedisPublishSettings): RedisPublisher {
    this.assertOpen();
    return new RedisPublisher(this, this.#inbox, settings, this.#inflight);
  }

  describeServer(): ServerDescription {
    if (this.#facts.inProcess) {
      return { protocol: "redis", description: "in-process stand-in of a Redis server" };
    }
    return describeRedisServer(this.#settings, this.#facts.version);
  }

  /** A name is a stream unless this connection reads it as a list or a channel. */
  protected prepareInjection(message: OutgoingMessage): Injection {
    const callNow = this.link.callNow;
    if (callNow === undefined) throw this.notInProcess("inject() works");
    const { command, raw } = this.pairPublisher({}).command(message);
    return { raw, deliver: () => callNow(command.name, command.args) };
  }

  transportOf(name: string): "stream" | "list" | "pubsub" {
    return this.#transports.get(name) ?? "stream";
  }

  protected async teardown(): Promise<TeardownFacts<ClosedRedisBroker>> {
    await this.#inbox.stop(this.closedError("request"));
    // Publishes already sent get a moment to be answered; what is left counts as unflushed.
    const deadline = Date.now() + 2000;
    while (this.#inflight.count > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const unflushed = this.#inflight.count;
    await this.link.close();
    return { unflushed };
  }
}

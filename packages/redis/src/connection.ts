import type {
  Clock,
  ClosedBroker,
  ConnectedBroker,
  ConnectionListener,
  DescribesServer,
  OutgoingMessage,
  ServerDescription,
} from "@ruststream/core";
import {
  type Backlog,
  brokerMark,
  type Coordinator,
  describeMark,
  type Injection,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import type { ResolvedConnection } from "./client/connectionOptions.js";
import type { Link } from "./client/link.js";
import type { RedisHost } from "./host.js";
import type { RedisListDelivery } from "./list/listDelivery.js";
import { RedisListSubscription } from "./list/listSubscription.js";
import { describeRedisServer, type RedisBrokerOptions } from "./options.js";
import { type PublisherHost, RedisPublisher, type RedisPublishSettings } from "./publisher.js";
import { RedisPublish } from "./publishPolicy.js";
import type { RedisPubSubDelivery } from "./pubsub/pubsubDelivery.js";
import { RedisPubSubSubscription } from "./pubsub/pubsubSubscription.js";
import { ReplyInbox } from "./replyInbox.js";
import { type RedisSource, RedisStream } from "./sources.js";
import type { RedisStreamDelivery } from "./stream/streamDelivery.js";
import { RedisStreamSubscription } from "./stream/streamSubscription.js";

/** Every delivery the Redis broker hands out. */
export type RedisDelivery = RedisStreamDelivery | RedisListDelivery | RedisPubSubDelivery;

/** Every subscription the Redis broker opens; only stream subscriptions batch and seek. */
export type RedisSubscription =
  | RedisStreamSubscription
  | RedisListSubscription
  | RedisPubSubSubscription;

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
  readonly onState: ConnectionListener | undefined;
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
      facts.onState,
    );
    this.link = link;
    link.states?.follow((change) => this.reportState(change));
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

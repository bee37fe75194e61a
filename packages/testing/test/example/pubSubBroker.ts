// A complete, deliberately small broker: fire-and-forget publish/subscribe inside one process, in
// the manner of Redis pub/sub. It is the README's example of what a broker package implements, and
// it passes the suites that fit a broker with no acknowledgement (see pubSubBroker.test.ts).
import {
  type AddressedSource,
  type Broker,
  type ClosedBroker,
  type ConnectedBroker,
  type DescribesServer,
  HeaderMap,
  headerNames,
  type OutgoingMessage,
  type Position,
  type Publisher,
  type PublishPolicy,
  type ReadonlyHeaderMap,
  type Receipt,
  RustStreamError,
  type ServerDescription,
  type SettleResult,
  type Subscription,
} from "@ruststream/core";
import {
  brokerMark,
  DeliveryBase,
  describeMark,
  partitionKeyBytes,
  policyMark,
  snapshotMessage,
  sourceMark,
  subscriptionIterator,
} from "@ruststream/core/broker";

/** The descriptor: a channel name. A retry copy published to the channel comes back. */
export class Channel implements AddressedSource {
  readonly [sourceMark] = "pubsub";
  readonly copies = "addressed" as const;
  constructor(readonly name: string) {}
  get redeliveryAddress(): string {
    return this.name;
  }
}

const nowhere: Position = { broker: "pubsub", toString: () => "" };

/** Nothing to acknowledge: every verb answers `unsupported`, honestly, and leaves it open. */
class PubSubDelivery extends DeliveryBase {
  readonly redeliveryCount = undefined;
  readonly position = nowhere;
  constructor(
    readonly name: string,
    readonly payload: Uint8Array,
    readonly headers: ReadonlyHeaderMap,
  ) {
    super();
  }
  // No native key on this "wire": the key travels in core's default header.
  get partitionKey(): Uint8Array | undefined {
    return this.headers.get(headerNames.partitionKey);
  }
  protected settleAck(): SettleResult {
    return "unsupported";
  }
  protected settleNack(): SettleResult {
    return "unsupported";
  }
}

class ChannelSubscription implements Subscription<PubSubDelivery> {
  readonly #queue: PubSubDelivery[] = [];
  #waiting: ((d: PubSubDelivery | undefined) => void) | undefined;
  #closed = false;
  constructor(
    readonly name: string,
    private readonly connection: ConnectedPubSub,
  ) {}

  push(delivery: PubSubDelivery): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting(delivery);
    else this.#queue.push(delivery);
  }

  async next(): Promise<IteratorResult<PubSubDelivery, undefined>> {
    this.connection.assertOpen();
    const ready = this.#queue.shift();
    if (ready) return { done: false, value: ready };
    if (this.#closed) return { done: true, value: undefined };
    const delivery = await new Promise<PubSubDelivery | undefined>((r) => {
      this.#waiting = r;
    });
    this.connection.assertOpen();
    return delivery ? { done: false, value: delivery } : { done: true, value: undefined };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.connection.forget(this);
    this.#waiting?.(undefined);
    this.#waiting = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<PubSubDelivery, undefined> {
    return subscriptionIterator(this);
  }
}

class PubSubPublisher implements Publisher {
  constructor(private readonly connection: ConnectedPubSub) {}
  async publish(message: OutgoingMessage): Promise<Receipt> {
    this.connection.assertOpen();
    const headers = message.headers?.clone() ?? new HeaderMap();
    if (message.partitionKey !== undefined) {
      headers.set(headerNames.partitionKey, partitionKeyBytes(message.partitionKey));
    }
    this.connection.route(snapshotMessage({ ...message, headers }));
    return { name: message.name };
  }
}

/** The publish policy: configuration only, paired with a connection at startup. */
export class PubSubPublish implements PublishPolicy<ConnectedPubSub, PubSubPublisher> {
  readonly [policyMark] = "pubsub";
  async pair(connected: ConnectedPubSub): Promise<PubSubPublisher> {
    connected.assertOpen();
    return new PubSubPublisher(connected);
  }
}

export interface ClosedPubSub extends ClosedBroker {
  readonly droppedSubscriptions: number;
}

type Hub = Map<string, Set<ChannelSubscription>>;

export class ConnectedPubSub
  implements
    ConnectedBroker<Channel, PubSubDelivery, PubSubPublisher, ClosedPubSub>,
    DescribesServer
{
  readonly [brokerMark] = "pubsub";
  readonly [describeMark] = true as const;
  readonly #mine = new Set<ChannelSubscription>();
  #closed: ClosedPubSub | undefined;
  constructor(private readonly hub: Hub) {}

  get state(): "connected" | "closed" {
    return this.#closed ? "closed" : "connected";
  }
  source(name: string): Channel {
    return new Channel(name);
  }
  async subscribe(source: string | Channel): Promise<ChannelSubscription> {
    this.assertOpen();
    const channel = typeof source === "string" ? this.source(source) : source;
    const subscription = new ChannelSubscription(channel.name, this);
    const set = this.hub.get(channel.name) ?? new Set();
    this.hub.set(channel.name, set);
    set.add(subscription);
    this.#mine.add(subscription);
    return subscription;
  }
  defaultPublishPolicy(): PubSubPublish {
    return new PubSubPublish();
  }
  describeServer(): ServerDescription {
    return server;
  }
  async shutdown(): Promise<ClosedPubSub> {
    if (this.#closed) return this.#closed;
    const open = [...this.#mine];
    this.#closed = {
      [brokerMark]: "pubsub",
      state: "closed",
      unflushed: 0,
      droppedSubscriptions: open.length,
    };
    // A pull waiting in one of them wakes up, sees the closed connection and rejects.
    for (const subscription of open) await subscription.close();
    return this.#closed;
  }

  assertOpen(): void {
    if (this.#closed) {
      throw new RustStreamError(
        "closed",
        "the pub/sub broker was shut down: connect again to use it",
      );
    }
  }
  forget(subscription: ChannelSubscription): void {
    this.hub.get(subscription.name)?.delete(subscription);
    this.#mine.delete(subscription);
  }
  route(message: ReturnType<typeof snapshotMessage>): void {
    for (const s of this.hub.get(message.name) ?? []) {
      s.push(new PubSubDelivery(message.name, message.payload, new HeaderMap(message.headers)));
    }
  }
}

/** What docs say about the server: one in-process hub, so no host and nothing secret. */
const server: ServerDescription = { protocol: "pubsub", description: "in-process hub" };

/** The broker: the constructor only records configuration; the hub stands for the server. */
export class PubSubBroker implements Broker<ConnectedPubSub>, DescribesServer {
  readonly [brokerMark] = "pubsub";
  readonly [describeMark] = true as const;
  readonly #hub: Hub = new Map();
  async connect(): Promise<ConnectedPubSub> {
    return new ConnectedPubSub(this.#hub);
  }
  describeServer(): ServerDescription {
    return server;
  }
}

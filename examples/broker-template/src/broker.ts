import {
  type Broker,
  type ClosedBroker,
  type ConnectedBroker,
  type ConnectionListener,
  type ConnectOptions,
  type DescribesServer,
  type OutgoingMessage,
  type RawMessage,
  RustStreamError,
  type ServerDescription,
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
  positive,
  TestableConnection,
  takeBack,
} from "@ruststream/core/broker";
import type { ChannelDelivery } from "./channel/channelDelivery.js";
import { type ChannelHost, ChannelSubscription } from "./channel/channelSubscription.js";
import { channelHeaderNames } from "./names.js";
import { ChannelPublish, type ChannelPublisher, frameOf, type PublisherHost } from "./publisher.js";
import { Channel } from "./sources.js";
import { Hub, hubAt } from "./wire/hub.js";
import type { Frame, Link } from "./wire/link.js";

export interface ChannelBrokerOptions {
  /** The hub to reach, as a network broker takes a host and port. */
  readonly address: string;
  /**
   * The credential the hub is reached with. Never shown: not in `describeServer()`, logs or docs,
   * which the credentials suite checks.
   */
  readonly token?: string;
  /** The largest payload a publish may carry (default 1 MiB). */
  readonly maxMessageBytes?: number;
}

const defaultMaxMessageBytes = 1024 * 1024;

/** What shutting down a connection left behind: plain data, no way to publish or subscribe. */
export interface ClosedChannelBroker extends ClosedBroker {
  /** Deliveries that had arrived and were never pulled, lost as a fire-and-forget wire loses them. */
  readonly droppedDeliveries: number;
}

function describe(options: ChannelBrokerOptions): ServerDescription {
  return { protocol: "channels", host: options.address };
}

/**
 * The broker: the constructor checks and records configuration, nothing else (no I/O, no timers),
 * so an app can be built and described without connecting.
 */
export class ChannelBroker
  implements
    Broker<ConnectedChannelBroker>,
    InProcessBroker<ConnectedChannelBroker>,
    DescribesServer
{
  readonly [brokerMark] = "channels";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: ChannelBrokerOptions;
  /** The in-process stand-in of the server: a hub of this broker object's own. */
  #inProcess: Hub | undefined;

  constructor(options: ChannelBrokerOptions) {
    if (typeof options?.address !== "string" || options.address === "") {
      throw new RustStreamError(
        "invalid-argument",
        'ChannelBroker needs an address: new ChannelBroker({ address: "hub-1" })',
      );
    }
    positive("maxMessageBytes", options.maxMessageBytes, defaultMaxMessageBytes);
    this.#options = options;
  }

  describeServer(): ServerDescription {
    return describe(this.#options);
  }

  /**
   * `options.onState` hears the connection's state: a broker whose client can lose its server
   * reports each change (`reportState`, from a LinkStates its link keeps); a hub is never lost, so
   * this one only ever hears `closed`.
   */
  async connect(options?: ConnectOptions): Promise<ConnectedChannelBroker> {
    return new ConnectedChannelBroker(hubAt(this.#options.address).link(), this.#options, {
      coordinator: noCoordinator,
      inProcess: false,
      onState: options?.onState,
    });
  }

  /**
   * The same broker over the in-process stand-in of its server, counting for the test's
   * coordinator: the same descriptors, policies and code above the link, so TestApp runs the
   * production app unchanged.
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedChannelBroker> {
    this.#inProcess ??= new Hub();
    return new ConnectedChannelBroker(this.#inProcess.link(), this.#options, {
      coordinator: options.coordinator,
      inProcess: true,
      onState: options.onState,
    });
  }
}

/** A connection. After `shutdown()` every method, and every handle it made, rejects `closed`. */
export class ConnectedChannelBroker
  extends TestableConnection<Channel, ClosedChannelBroker>
  implements
    ConnectedBroker<Channel, ChannelDelivery, ChannelPublisher, ClosedChannelBroker>,
    DescribesServer,
    ChannelHost,
    PublisherHost
{
  readonly [brokerMark] = "channels";
  readonly [describeMark] = true as const;
  readonly backlog: Backlog = "missed";
  readonly link: Link;
  readonly coordinator: Coordinator;
  readonly maxMessageBytes: number;
  readonly #options: ChannelBrokerOptions;
  readonly #subscriptions = new Set<ChannelSubscription>();

  constructor(
    link: Link,
    options: ChannelBrokerOptions,
    mode: {
      readonly coordinator: Coordinator;
      readonly inProcess: boolean;
      readonly onState: ConnectionListener | undefined;
    },
  ) {
    super({ label: "channel", accepts: "a name or a Channel" }, mode.inProcess, mode.onState);
    this.link = link;
    this.#options = options;
    this.coordinator = mode.coordinator;
    this.maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
  }

  source(name: string): Channel {
    return new Channel(name);
  }

  async subscribe(source: string | Channel): Promise<ChannelSubscription> {
    this.assertOpen();
    const subscription = new ChannelSubscription(this, this.descriptorOf(source).name);
    this.#subscriptions.add(subscription);
    return subscription;
  }

  defaultPublishPolicy(): ChannelPublish {
    return new ChannelPublish();
  }

  describeServer(): ServerDescription {
    return describe(this.#options);
  }

  protected prepareInjection(message: OutgoingMessage): Injection {
    const frame = frameOf(message, this.maxMessageBytes);
    return { raw: rawOf(frame), deliver: () => this.link.send(frame) };
  }

  protected async teardown(): Promise<ClosedChannelBroker> {
    const dropped = await takeBack(this.#subscriptions, this.closedError("subscription"));
    this.link.close();
    return { [brokerMark]: "channels", state: "closed", unflushed: 0, droppedDeliveries: dropped };
  }

  // ChannelHost and PublisherHost (assertOpen and closedError come from ConnectionBase)

  forget(subscription: ChannelSubscription): void {
    this.#subscriptions.delete(subscription);
  }

  send(frame: Frame): void {
    this.assertOpen();
    this.record(rawOf(frame));
    this.link.send(frame);
  }
}

/** A frame as `published()` lists it: the message as the wire carries it. */
function rawOf(frame: Frame): RawMessage {
  const partitionKey = frame.headers.get(channelHeaderNames.partitionKey);
  return { name: frame.channel, payload: frame.payload, headers: frame.headers, partitionKey };
}

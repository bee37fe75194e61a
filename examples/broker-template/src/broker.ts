import {
  type Broker,
  type ClosedBroker,
  type ConnectedBroker,
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
  type TeardownFacts,
  TestableConnection,
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

/**
 * What shutting down a connection left behind: plain data, no way to publish or subscribe. Core's
 * fields say it all here (`returnedDeliveries`: frames that had arrived and were never pulled,
 * handed back to a fire-and-forget wire, which loses them); a broker with facts of its own (the
 * file broker's end-of-stream marker) adds them beside core's.
 */
export type ClosedChannelBroker = ClosedBroker;

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

  async connect(): Promise<ConnectedChannelBroker> {
    return new ConnectedChannelBroker(hubAt(this.#options.address).link(), this.#options, {
      coordinator: noCoordinator,
      inProcess: false,
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

  constructor(
    link: Link,
    options: ChannelBrokerOptions,
    mode: { readonly coordinator: Coordinator; readonly inProcess: boolean },
  ) {
    super({ label: "channel", accepts: "a name or a Channel" }, mode.inProcess);
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
    return this.adopt(new ChannelSubscription(this, this.descriptorOf(source).name));
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

  /** The base took every subscription back first: only the link is left to close. */
  protected async teardown(): Promise<TeardownFacts<ClosedChannelBroker>> {
    this.link.close();
    return { unflushed: 0 };
  }

  // ChannelHost and PublisherHost (assertOpen and forget come from ConnectionBase)

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

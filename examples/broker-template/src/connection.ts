import type {
  ClosedBroker,
  ConnectedBroker,
  ConnectionListener,
  DescribesServer,
  OutgoingMessage,
  RawMessage,
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
import type { ChannelDelivery } from "./channel/channelDelivery.js";
import { type ChannelHost, ChannelSubscription } from "./channel/channelSubscription.js";
import { channelHeaderNames } from "./names.js";
import {
  type ChannelBrokerOptions,
  defaultMaxMessageBytes,
  describeChannelServer,
} from "./options.js";
import { type ChannelPublisher, frameOf, type PublisherHost } from "./publisher.js";
import { ChannelPublish } from "./publishPolicy.js";
import { Channel } from "./sources.js";
import type { Frame, Link } from "./wire/link.js";

/**
 * What shutting down a connection left behind: plain data, no way to publish or subscribe. Core's
 * fields say it all here (`returnedDeliveries`: frames that had arrived and were never pulled,
 * handed back to a fire-and-forget wire, which loses them); a broker with facts of its own (the
 * file broker's end-of-stream marker) adds them beside core's.
 */
export type ClosedChannelBroker = ClosedBroker;

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
    return this.adopt(new ChannelSubscription(this, this.descriptorOf(source).name));
  }

  defaultPublishPolicy(): ChannelPublish {
    return new ChannelPublish();
  }

  describeServer(): ServerDescription {
    return describeChannelServer(this.#options);
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

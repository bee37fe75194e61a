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
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  isSource,
  noCoordinator,
  testableMark,
} from "@ruststream/core/broker";
import type { ChannelDelivery } from "./channel/channelDelivery.js";
import { type ChannelHost, ChannelSubscription } from "./channel/channelSubscription.js";
import { InProcessServer } from "./inProcess/inProcessServer.js";
import { ChannelPublish, type ChannelPublisher, frameOf, type PublisherHost } from "./publisher.js";
import { Channel } from "./sources.js";
import { hubAt } from "./wire/hub.js";
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
  readonly maxPayloadBytes?: number;
}

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
  #inProcess: InProcessServer | undefined;

  constructor(options: ChannelBrokerOptions) {
    if (typeof options?.address !== "string" || options.address === "") {
      throw new RustStreamError(
        "invalid-argument",
        'ChannelBroker needs an address: new ChannelBroker({ address: "hub-1" })',
      );
    }
    const max = options.maxPayloadBytes ?? 1024 * 1024;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RustStreamError(
        "invalid-argument",
        `maxPayloadBytes: ${max}; give a whole number of bytes, 1 or more`,
      );
    }
    this.#options = options;
  }

  describeServer(): ServerDescription {
    return describe(this.#options);
  }

  async connect(): Promise<ConnectedChannelBroker> {
    return new ConnectedChannelBroker(hubAt(this.#options.address).link(), this.#options, {
      coordinator: noCoordinator,
      server: undefined,
    });
  }

  /**
   * The same broker over the in-process stand-in of its server, counting for the test's
   * coordinator: the same descriptors, policies and code above the link, so TestApp runs the
   * production app unchanged.
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedChannelBroker> {
    this.#inProcess ??= new InProcessServer();
    return new ConnectedChannelBroker(this.#inProcess.link(), this.#options, {
      coordinator: options.coordinator,
      server: this.#inProcess,
    });
  }
}

function closedError(): RustStreamError {
  return new RustStreamError(
    "closed",
    "the channel broker was shut down: connect again (broker.connect()) to use it",
  );
}

/** A connection. After `shutdown()` every method, and every handle it made, rejects `closed`. */
export class ConnectedChannelBroker
  implements
    ConnectedBroker<Channel, ChannelDelivery, ChannelPublisher, ClosedChannelBroker>,
    DescribesServer,
    ChannelHost,
    PublisherHost
{
  readonly [brokerMark] = "channels";
  readonly [describeMark] = true as const;
  readonly [testableMark] = true as const;
  readonly backlog: Backlog = "missed";
  readonly link: Link;
  readonly coordinator: Coordinator;
  readonly maxPayloadBytes: number;
  readonly #options: ChannelBrokerOptions;
  readonly #server: InProcessServer | undefined;
  readonly #subscriptions = new Set<ChannelSubscription>();
  #closed: ClosedChannelBroker | undefined;

  constructor(
    link: Link,
    options: ChannelBrokerOptions,
    mode: { readonly coordinator: Coordinator; readonly server: InProcessServer | undefined },
  ) {
    this.link = link;
    this.#options = options;
    this.coordinator = mode.coordinator;
    this.#server = mode.server;
    this.maxPayloadBytes = options.maxPayloadBytes ?? 1024 * 1024;
  }

  get state(): "connected" | "closed" {
    return this.#closed === undefined ? "connected" : "closed";
  }

  source(name: string): Channel {
    return new Channel(name);
  }

  async subscribe(source: string | Channel): Promise<ChannelSubscription> {
    this.assertOpen();
    if (typeof source !== "string" && !(isSource(source) && source.copies === "addressed")) {
      throw new RustStreamError(
        "foreign-value",
        "the channel broker subscribes to a name or a Channel: use new Channel(name)",
      );
    }
    const descriptor = typeof source === "string" ? this.source(source) : source;
    const subscription = new ChannelSubscription(this, descriptor.name);
    this.#subscriptions.add(subscription);
    return subscription;
  }

  defaultPublishPolicy(): ChannelPublish {
    return new ChannelPublish();
  }

  describeServer(): ServerDescription {
    return describe(this.#options);
  }

  /** In-process: publishes as if from outside the process, synchronously. */
  inject(message: OutgoingMessage): void {
    this.#inProcessOnly("inject");
    this.send(frameOf(message, this.maxPayloadBytes));
  }

  /** In-process: every message sent to `name` through this broker's stand-in, in order. */
  published(name: string): readonly RawMessage[] {
    return this.#inProcessOnly("published").published(name);
  }

  async shutdown(): Promise<ClosedChannelBroker> {
    if (this.#closed !== undefined) return this.#closed;
    let dropped = 0;
    this.#closed = {
      [brokerMark]: "channels",
      state: "closed",
      unflushed: 0,
      droppedDeliveries: 0,
    };
    const subscriptions = [...this.#subscriptions];
    for (const subscription of subscriptions) subscription.revoke(closedError());
    for (const subscription of subscriptions) dropped += await subscription.surrender();
    this.link.close();
    this.#closed = { ...this.#closed, droppedDeliveries: dropped };
    return this.#closed;
  }

  // ChannelHost and PublisherHost

  assertOpen(): void {
    if (this.#closed !== undefined) throw closedError();
  }

  forget(subscription: ChannelSubscription): void {
    this.#subscriptions.delete(subscription);
  }

  send(frame: Frame): void {
    this.assertOpen();
    this.link.send(frame);
  }

  #inProcessOnly(what: string): InProcessServer {
    if (this.#server === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `${what}() works only on an in-process connection: connect with connectInProcess()`,
      );
    }
    return this.#server;
  }
}

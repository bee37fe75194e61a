import {
  type BackgroundListener,
  type Clock,
  type ClosedBroker,
  type ConnectedBroker,
  type ConnectionListener,
  consoleLogger,
  type DescribesServer,
  type Logger,
  type OutgoingMessage,
  type RawMessage,
  type ServerDescription,
} from "@ruststream/core";
import {
  type Backlog,
  brokerMark,
  type Coordinator,
  describeMark,
  type Injection,
  type PendingReply,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import type { Frame, NatsLink } from "./client/link.js";
import type { CoreDelivery } from "./core/coreDelivery.js";
import { CoreSubscription } from "./core/coreSubscription.js";
import { headerMapOf } from "./headerValues.js";
import type { NatsHost } from "./host.js";
import type { JetStreamPublisher } from "./jetStreamPublisher.js";
import type { JetStreamDelivery } from "./jetstream/jetStreamDelivery.js";
import { JetStreamSubscription } from "./jetstream/jetStreamSubscription.js";
import { openOrdered } from "./jetstream/orderedSubscription.js";
import { openKvWatch } from "./kv/kvWatchSubscription.js";
import { natsHeaderNames } from "./names.js";
import { openObjectWatch } from "./obj/objectWatchSubscription.js";
import { describeNatsServer, type NatsBrokerOptions } from "./options.js";
import { OrderedJetStreamSubject } from "./orderedSubject.js";
import {
  frameOf,
  type NatsPublisher,
  type NatsPublishOptions,
  type PublisherHost,
} from "./publisher.js";
import { NatsPublish } from "./publishPolicy.js";
import { ReplyInbox } from "./replyInbox.js";
import { JetStreamSubject, KvWatch, NatsSubject, ObjectWatch } from "./sources.js";

/** What shutting down a connection left behind: core's facts, nothing of NATS's own. */
export type ClosedNatsBroker = ClosedBroker;

/**
 * A NATS source: a core subject, a JetStream pull consumer, a JetStream ordered consumer, a KV
 * bucket's or an object store's watch.
 */
export type NatsSource =
  | NatsSubject
  | JetStreamSubject
  | OrderedJetStreamSubject
  | KvWatch
  | ObjectWatch;

/** A connection. After `shutdown()` every method, and every handle it made, rejects `closed`. */
export class ConnectedNatsBroker
  extends TestableConnection<NatsSource, ClosedNatsBroker, NatsPublishOptions>
  implements
    ConnectedBroker<
      NatsSource,
      CoreDelivery | JetStreamDelivery,
      NatsPublisher | JetStreamPublisher,
      ClosedNatsBroker
    >,
    DescribesServer,
    NatsHost,
    PublisherHost
{
  readonly [brokerMark] = "nats";
  readonly [describeMark] = true as const;
  /** Core NATS delivers to whoever is subscribed when a message is published. */
  readonly backlog: Backlog = "missed";
  readonly link: NatsLink;
  readonly coordinator: Coordinator;
  readonly clock: Clock;
  readonly background: BackgroundListener;
  readonly #options: NatsBrokerOptions;
  readonly #inbox: ReplyInbox;

  constructor(
    link: NatsLink,
    options: NatsBrokerOptions,
    mode: {
      readonly coordinator: Coordinator;
      readonly clock: Clock;
      readonly inProcess: boolean;
      readonly onState?: ConnectionListener | undefined;
      readonly onBackground?: BackgroundListener | undefined;
      readonly logger?: Logger | undefined;
    },
  ) {
    super(
      {
        label: "NATS",
        accepts:
          "a subject, a NatsSubject, a JetStreamSubject, an OrderedJetStreamSubject, a KvWatch or an ObjectWatch",
      },
      mode.inProcess,
      mode.onState,
    );
    this.link = link;
    this.#options = options;
    this.coordinator = mode.coordinator;
    this.clock = mode.clock;
    this.background = mode.onBackground ?? loggedBackground(mode.logger ?? consoleLogger());
    this.#inbox = new ReplyInbox(link, mode.clock);
    link.states.follow((change) => this.reportState(change));
  }

  /** A bare name is a core NATS subject. */
  source(name: string): NatsSource {
    return new NatsSubject(name);
  }

  async subscribe(source: string | NatsSource): Promise<CoreSubscription | JetStreamSubscription> {
    this.assertOpen();
    const descriptor = this.descriptorOf(source);
    if (descriptor instanceof JetStreamSubject) {
      return this.adopt(await JetStreamSubscription.open(this, descriptor));
    }
    if (descriptor instanceof OrderedJetStreamSubject)
      return this.adopt(await openOrdered(this, descriptor));
    if (descriptor instanceof KvWatch) return this.adopt(await openKvWatch(this, descriptor));
    if (descriptor instanceof ObjectWatch)
      return this.adopt(await openObjectWatch(this, descriptor));
    return this.adopt(
      new CoreSubscription(this, descriptor.name, descriptor.queue, descriptor.maxBuffered),
    );
  }

  defaultPublishPolicy(): NatsPublish {
    return new NatsPublish(this.#options.publish);
  }

  describeServer(): ServerDescription {
    return describeNatsServer(this.#options);
  }

  protected prepareInjection(message: OutgoingMessage<NatsPublishOptions>): Injection {
    const frame = frameOf(message, this.link.maxPayload, false);
    return { raw: rawOf(frame), deliver: () => this.link.publish(frame) };
  }

  /** The base took every subscription back first: the inbox and the client are left to close. */
  protected async teardown(): Promise<TeardownFacts<ClosedNatsBroker>> {
    this.#inbox.stop(this.closedError("a request"));
    await this.link.close();
    return { unflushed: 0 };
  }

  // PublisherHost (assertOpen and forget come from ConnectionBase)

  sent(frame: Frame): void {
    this.record(rawOf(frame));
  }

  async awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.assertOpen();
    return this.#inbox.awaitReply(correlationId, timeoutMs);
  }
}

/** A connection made by hand (no app to report to): its background failures are logger lines. */
function loggedBackground(log: Logger): BackgroundListener {
  return {
    failed: (source, error) => log.warn({ source, error }, `${source} is failing`),
    recovered: (source) => log.info({ source }, `${source} works again`),
  };
}

/** A frame as `published()` lists it: the message as the wire carries it. */
function rawOf(frame: Frame): RawMessage {
  const headers = headerMapOf(frame.headers);
  return {
    name: frame.subject,
    payload: frame.payload,
    headers,
    partitionKey: headers.get(natsHeaderNames.partitionKey),
  };
}

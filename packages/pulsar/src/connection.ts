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
  describeMark,
  type Injection,
  type PendingReply,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import type { PulsarDelivery } from "./delivery/pulsarDelivery.js";
import { type DeadLetterPolicy, SharedDelivery } from "./delivery/sharedDelivery.js";
import { SingleDelivery } from "./delivery/singleDelivery.js";
import { undecodableCopy } from "./delivery/undecodableCopy.js";
import type { PulsarHost } from "./host.js";
import type { InProcessPulsar } from "./inProcess/inProcessPulsar.js";
import type { Link, LinkProducer } from "./link/link.js";
import { retryTopic } from "./names.js";
import type { PulsarBrokerOptions } from "./options.js";
import {
  type PreparedMessage,
  type ProducerKey,
  type PublisherHost,
  type PulsarPublisher,
  type PulsarPublishOptions,
  prepareMessage,
  sendPrepared,
} from "./publisher.js";
import { PulsarPublish } from "./publishPolicy.js";
import { ReplyInbox } from "./replyInbox.js";
import { PulsarShared, type PulsarSharedSource, type PulsarSource } from "./sources.js";
import { PulsarSubscription } from "./subscription/pulsarSubscription.js";
import { Readers } from "./subscription/readers.js";
import type { UndecodableHandler } from "./wire/undecodable.js";

/**
 * What shutting down a Pulsar connection left behind: `unflushed` counts publishes sent and not yet
 * confirmed by the broker when the connection closed, and `returnedDeliveries` the deliveries handed
 * out and not acked, which the broker delivers again once their consumers closed.
 */
export type ClosedPulsarBroker = ClosedBroker;

/** What the broker tells a connection it makes, beside the options. */
export interface ConnectionFacts {
  readonly clock: Clock;
  readonly now: () => number;
  /** The subscription option, else the connecting app's name. */
  readonly subscription: string | undefined;
  readonly description: ServerDescription;
  readonly inProcess: InProcessPulsar | undefined;
  readonly onState: ConnectionListener | undefined;
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
      facts.onState,
    );
    this.#link = link;
    link.states?.follow((change) => this.reportState(change));
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
        countsLeased:
          descriptor.subscriptionType === "Shared" || descriptor.subscriptionType === "Key_Shared",
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

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
import type { DelayedCopy, RabbitHost } from "./host.js";
import type { Link, PublishRequest } from "./link.js";
import { waitQueueName } from "./names.js";
import { defaultMaxMessageBytes, type RabbitBrokerOptions } from "./options.js";
import {
  type PublisherHost,
  prepare,
  type RabbitPublisher,
  type RabbitPublishOptions,
} from "./publisher.js";
import { RabbitPublish } from "./publishPolicy.js";
import { QueueBacklogSubscription } from "./queue/queueBacklogSubscription.js";
import type { QueueDelivery } from "./queue/queueDelivery.js";
import type { QueueSubscription } from "./queue/queueSubscription.js";
import { ReplyInbox } from "./replyInbox.js";
import { RabbitQueue, type RabbitSource } from "./sources.js";
import { StreamSubscription } from "./stream/streamSubscription.js";
import type { Topology } from "./topology/topology.js";

/**
 * What shutting down a RabbitMQ connection left behind: `unflushed` counts publishes sent and not
 * confirmed when the connection closed, `returnedDeliveries` the deliveries not acked, which the
 * server puts back in their queues once their channels closed.
 */
export type ClosedRabbitBroker = ClosedBroker;

/** What the broker tells a connection it makes, beside the options. */
export interface ConnectionFacts {
  readonly clock: Clock;
  readonly description: ServerDescription;
  readonly inProcess: boolean;
  readonly onState: ConnectionListener | undefined;
}

/** A connection to RabbitMQ. After `shutdown()` every method, and every handle it made, rejects `closed`. */
export class ConnectedRabbitBroker
  extends TestableConnection<RabbitSource, ClosedRabbitBroker, RabbitPublishOptions>
  implements
    ConnectedBroker<RabbitSource, QueueDelivery, RabbitPublisher, ClosedRabbitBroker>,
    DescribesServer,
    RabbitHost,
    PublisherHost
{
  readonly [brokerMark] = "rabbitmq";
  readonly [describeMark] = true as const;
  /**
   * A queue keeps what was published to it before a consumer came once it exists; a new
   * subscription declares its queue, and what was published before went nowhere.
   */
  readonly backlog: Backlog = "missed";
  readonly link: Link;
  readonly maxMessageBytes: number;
  readonly #options: RabbitBrokerOptions;
  readonly #facts: ConnectionFacts;
  readonly #inbox: ReplyInbox;
  readonly #waitQueues = new Map<string, Promise<void>>();
  /** Each queue's wait queues this connection declared, once the server confirmed each. */
  readonly #declaredWaits = new Map<string, Set<string>>();
  /** The delivery limits of the quorum queues this connection declared or checked. */
  readonly #limits = new Map<string, number>();
  #inflight = 0;

  constructor(link: Link, options: RabbitBrokerOptions, facts: ConnectionFacts) {
    super(
      {
        label: "RabbitMQ",
        accepts: "a name, RabbitQueue, RabbitQuorumQueue or RabbitStream",
        // Cancelling a consumer and closing its channel waits on a server that may have stopped
        // answering: bounded, and what stays unacked goes back when the connection closes.
        takeBackWithinMs: 5000,
      },
      facts.inProcess,
      facts.onState,
    );
    this.link = link;
    link.states?.follow((change) => this.reportState(change));
    this.#options = options;
    this.#facts = facts;
    this.maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
    this.#inbox = new ReplyInbox(link, facts.clock);
  }

  /** A bare name is a classic queue of that name. */
  source(name: string): RabbitQueue {
    return new RabbitQueue(name);
  }

  async subscribe(source: string | RabbitSource): Promise<QueueSubscription> {
    this.assertOpen();
    const descriptor = this.descriptorOf(source);
    await this.ensure(descriptor.topology(), descriptor.declare);
    const retry = descriptor.type === "quorum" ? descriptor.retry : undefined;
    const options = {
      queue: descriptor.name,
      type: descriptor.type,
      prefetch: descriptor.prefetch,
      arguments: descriptor.consumeArguments(),
      cap:
        retry?.maxAttempts === undefined || retry.deadLetter === undefined
          ? undefined
          : { maxAttempts: retry.maxAttempts, deadLetter: retry.deadLetter },
    };
    return this.adopt(
      descriptor.type === "stream"
        ? await StreamSubscription.open(this, options)
        : await QueueBacklogSubscription.open(this, options),
    );
  }

  defaultPublishPolicy(): RabbitPublish {
    return new RabbitPublish();
  }

  describeServer(): ServerDescription {
    return this.#facts.description;
  }

  /** Declares a topology, or checks it: the descriptor's choice, else the broker's, else a check. */
  async ensure(topology: Topology, declare: boolean | undefined): Promise<void> {
    this.assertOpen();
    await this.link.ensure(topology, declare ?? this.#options.declare ?? false);
    for (const queue of topology.queues) {
      const limit = queue.arguments["x-delivery-limit"];
      if (typeof limit === "number") this.#limits.set(queue.name, limit);
    }
  }

  deliveryLimit(queue: string): number | undefined {
    return this.#limits.get(queue);
  }

  // PublisherHost and RabbitHost (assertOpen, forget and closedError come from ConnectionBase)

  async send(request: PublishRequest, kind: "publish" | "request"): Promise<void> {
    this.assertOpen();
    this.#inflight++;
    try {
      await (kind === "request" ? this.link.publishRequest(request) : this.link.publish(request));
    } finally {
      this.#inflight--;
    }
  }

  async commit(requests: readonly PublishRequest[]): Promise<void> {
    this.assertOpen();
    this.#inflight += requests.length;
    try {
      await this.link.commit(requests);
    } finally {
      this.#inflight -= requests.length;
    }
  }

  async awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.assertOpen();
    return this.#inbox.awaitReply(correlationId, timeoutMs);
  }

  async publishLater(copy: DelayedCopy, delayMs: number): Promise<void> {
    const wait = waitQueueName(copy.queue, delayMs);
    let declared = this.#waitQueues.get(wait);
    if (declared === undefined) {
      // Ours, whatever `declare` says: the queue's TTL dead-letters back through the default
      // exchange to the queue the message came from. Kept on the server for the next retry.
      declared = this.link.ensure(waitQueue(wait, copy.queue, delayMs), true);
      this.#waitQueues.set(wait, declared);
      // Noted before the copy is published (this reaction runs ahead of the await below), so a
      // backlog read once the retry settled counts it.
      declared.then(
        () => {
          const waits = this.#declaredWaits.get(copy.queue) ?? new Set<string>();
          this.#declaredWaits.set(copy.queue, waits.add(wait));
        },
        () => this.#waitQueues.delete(wait),
      );
    }
    await declared;
    await this.send(
      {
        exchange: "",
        routingKey: wait,
        content: copy.content,
        properties: copy.properties,
        mandatory: true,
      },
      "publish",
    );
  }

  waitQueuesOf(queue: string): readonly string[] {
    return [...(this.#declaredWaits.get(queue) ?? [])];
  }

  async publishDeadLetter(message: OutgoingMessage): Promise<void> {
    const { request } = prepare(
      message,
      { exchange: "", mandatory: true, persistent: true },
      this.maxMessageBytes,
    );
    await this.send(request, "publish");
  }

  protected prepareInjection(message: OutgoingMessage<RabbitPublishOptions>): Injection {
    const publishNow = this.link.publishNow;
    if (publishNow === undefined) throw this.notInProcess("inject() works");
    // As a client outside the process would publish: to a name no queue has, it goes nowhere.
    const { request, raw } = prepare(
      message,
      { exchange: "", mandatory: false, persistent: true },
      this.maxMessageBytes,
    );
    return { raw, deliver: () => publishNow(request) };
  }

  protected async teardown(): Promise<TeardownFacts<ClosedRabbitBroker>> {
    this.#inbox.stop(this.closedError("request"));
    const unflushed = this.#inflight;
    await bounded(this.link.close(), 5000);
    return { unflushed };
  }
}

/** A wait queue: its TTL the delay, dead-lettering back to `queue` through the default exchange. */
function waitQueue(name: string, queue: string, delayMs: number): Topology {
  return {
    exchanges: [],
    queues: [
      {
        name,
        durable: true,
        exclusive: false,
        autoDelete: false,
        arguments: {
          "x-queue-type": "classic",
          "x-message-ttl": delayMs,
          "x-dead-letter-exchange": "",
          "x-dead-letter-routing-key": queue,
        },
      },
    ],
    bindings: [],
  };
}

/** Waits for `work` at most `ms`: teardown never hangs on a server that stopped answering. */
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

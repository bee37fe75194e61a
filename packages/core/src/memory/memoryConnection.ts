import { randomUUID } from "node:crypto";
import type { TeardownFacts } from "../broker/connectionBase.js";
import type { ClosedBroker, ConnectedBroker, ConnectionListener } from "../broker/contract.js";
import type { Backlog } from "../broker/inProcess.js";
import { type Injection, TestableConnection } from "../broker/testableConnection.js";
import type { DescribesServer } from "../capabilities.js";
import { RustStreamError } from "../errors.js";
import { brokerMark, describeMark } from "../marks.js";
import type { OutgoingMessage, RawMessage } from "../message.js";
import type { PendingReply } from "../replyWaiters.js";
import type { ServerDescription } from "../server.js";
import type { MemoryDelivery } from "./memoryDelivery.js";
import { describeMemoryServer, type MemoryBrokerOptions } from "./memoryOptions.js";
import { MemoryPublisher, type PublisherHost, prepareMessage } from "./memoryPublisher.js";
import { MemoryPublish } from "./memoryPublishPolicy.js";
import { MemoryReplyInbox } from "./memoryReplyInbox.js";
import { type MemorySource, MemoryTopic } from "./memorySources.js";
import type { MemoryStore } from "./memoryStore.js";
import { type MemoryHost, MemorySubscription } from "./memorySubscription.js";

/**
 * What shutting down a memory connection left behind: `unflushed` is always 0 (a memory publish is
 * confirmed once the message is in the topic), and `returnedDeliveries` went back to their groups,
 * at the front, for the next consumer.
 */
export type ClosedMemoryBroker = ClosedBroker;

/** A connection to a {@link MemoryBroker}. */
export class ConnectedMemoryBroker
  extends TestableConnection<MemorySource, ClosedMemoryBroker>
  implements
    ConnectedBroker<MemorySource, MemoryDelivery, MemoryPublisher, ClosedMemoryBroker>,
    DescribesServer,
    MemoryHost,
    PublisherHost
{
  readonly [brokerMark] = "memory";
  readonly [describeMark] = true as const;
  readonly backlog: Backlog = "missed";
  readonly maxMessageBytes: number;
  readonly #store: MemoryStore;
  readonly #options: MemoryBrokerOptions;
  readonly #inbox: MemoryReplyInbox;

  constructor(
    store: MemoryStore,
    options: MemoryBrokerOptions,
    inProcess: boolean,
    onState: ConnectionListener | undefined,
  ) {
    // Every connection injects (an injection is an append any client could make); an in-process one
    // records into the store's log, which the broker object's in-process connections share.
    super(
      { label: "memory", accepts: "a name, MemoryTopic or MemoryQueue" },
      { log: inProcess ? store.publishedLog : undefined },
      onState,
    );
    this.#store = store;
    this.#options = options;
    this.maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    // The store's clock, read at each call: an in-process run may swap it after this connection.
    const clock = {
      now: () => store.clock.now(),
      setTimer: (ms: number, callback: () => void) => store.clock.setTimer(ms, callback),
    };
    this.#inbox = new MemoryReplyInbox(clock, (topic) => this.#open(new MemoryTopic(topic)));
    store.openConnections++;
  }

  source(name: string): MemoryTopic {
    return new MemoryTopic(name);
  }

  async subscribe(source: string | MemorySource): Promise<MemorySubscription> {
    this.assertOpen();
    return this.adopt(this.#open(this.descriptorOf(source)));
  }

  defaultPublishPolicy(): MemoryPublish {
    return new MemoryPublish();
  }

  /** Used by {@link MemoryPublish.pair}. */
  pairPublisher(): MemoryPublisher {
    this.assertOpen();
    return new MemoryPublisher(this);
  }

  describeServer(): ServerDescription {
    return describeMemoryServer(this.#options);
  }

  protected prepareInjection(message: OutgoingMessage): Injection {
    const raw = prepareMessage(this, message);
    return { raw, deliver: () => this.#store.append(raw) };
  }

  protected async teardown(): Promise<TeardownFacts<ClosedMemoryBroker>> {
    await this.#inbox.stop(this.closedError("request"));
    if (--this.#store.openConnections === 0) this.#store.releaseTimers();
    return { unflushed: 0 };
  }

  // PublisherHost (assertOpen comes from ConnectionBase, as do the subscriptions' assertOpen and forget)

  append(message: RawMessage): bigint {
    this.assertOpen();
    this.record(message);
    return this.#store.append(message);
  }

  awaitReply(correlationId: string, timeoutMs: number): PendingReply {
    this.assertOpen();
    return this.#inbox.awaitReply(correlationId, timeoutMs);
  }

  #open(source: MemorySource): MemorySubscription {
    const topic = this.#store.topic(source.name);
    let subscription: MemorySubscription;
    if (source.copies === "broker") {
      const retry = source.retry;
      const half =
        retry !== undefined &&
        (retry.maxAttempts === undefined) !== (retry.deadLetter === undefined);
      if (half) {
        throw new RustStreamError(
          "invalid-argument",
          `the retry declared on queue "${source.name}" has only ${retry.maxAttempts === undefined ? "deadLetter" : "maxAttempts"}: declare both maxAttempts and deadLetter, or neither`,
        );
      }
      if (
        retry?.maxAttempts !== undefined &&
        !(Number.isSafeInteger(retry.maxAttempts) && retry.maxAttempts >= 1)
      ) {
        throw new RustStreamError(
          "invalid-argument",
          `maxAttempts ${retry.maxAttempts}: give 1 or more`,
        );
      }
      subscription = new MemorySubscription(
        this,
        topic.group("\u0000queue", "start", false),
        retry,
      );
    } else {
      const group =
        source.group === undefined
          ? topic.group(`\u0000${randomUUID()}`, source.start, true)
          : topic.group(source.group, source.start, false);
      subscription = new MemorySubscription(this, group, undefined, source.partitionCount);
    }
    return subscription;
  }
}

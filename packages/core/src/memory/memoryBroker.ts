import { randomUUID } from "node:crypto";
import type { TeardownFacts } from "../broker/connectionBase.js";
import type { Broker, ClosedBroker, ConnectedBroker } from "../broker/contract.js";
import type { Backlog, InProcessBroker, InProcessOptions } from "../broker/inProcess.js";
import { type Injection, TestableConnection } from "../broker/testableConnection.js";
import type { DescribesServer } from "../capabilities.js";
import { type Clock, systemClock } from "../clock.js";
import { RustStreamError } from "../errors.js";
import { headerNames } from "../headerNames.js";
import { brokerMark, describeMark, inProcessMark } from "../marks.js";
import type { OutgoingMessage, RawMessage } from "../message.js";
import { type PendingReply, ReplyWaiters } from "../replyWaiters.js";
import type { ServerDescription } from "../server.js";
import { hostFromUrl } from "../server.js";
import type { MemoryDelivery } from "./memoryDelivery.js";
import {
  MemoryPublish,
  MemoryPublisher,
  type PublisherHost,
  prepareMessage,
} from "./memoryPublisher.js";
import { type MemorySource, MemoryTopic } from "./memorySources.js";
import { MemoryStore } from "./memoryStore.js";
import { type MemoryHost, MemorySubscription } from "./memorySubscription.js";

export interface MemoryBrokerOptions {
  /**
   * Settled messages each topic keeps for seeking, beyond those a group still needs (default 1000).
   * A group that lags keeps its unsettled messages whatever this says.
   */
  readonly retain?: number;
  /** The largest payload a publish may carry (default 16 MiB), as a real broker has a limit. */
  readonly maxMessageBytes?: number;
  /** Where time comes from (delayed redelivery, request timeouts); real time by default. */
  readonly clock?: Clock;
  /** An address to show in generated docs; a user or password in it is never shown. */
  readonly url?: string;
}

/**
 * The in-process broker: the reference for every conformance suite and the transport tests run on.
 * The object is the server: each `connect()` is a client of it, and what one connection publishes,
 * or leaves unsettled when it shuts down, the next one sees. Two objects share nothing.
 */
export class MemoryBroker
  implements Broker<ConnectedMemoryBroker>, InProcessBroker<ConnectedMemoryBroker>, DescribesServer
{
  readonly [brokerMark] = "memory";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #store: MemoryStore;
  readonly #options: MemoryBrokerOptions;

  constructor(options: MemoryBrokerOptions = {}) {
    const retain = options.retain ?? 1000;
    if (!Number.isSafeInteger(retain) || retain < 0) {
      throw new RustStreamError(
        "invalid-argument",
        `retain: ${retain}; give a whole number, 0 or more`,
      );
    }
    this.#options = options;
    this.#store = new MemoryStore(retain, options.clock ?? systemClock);
  }

  /** The server, from configuration alone: `memory`, and the `url` option's host without its user. */
  describeServer(): ServerDescription {
    return describeMemoryServer(this.#options);
  }

  async connect(): Promise<ConnectedMemoryBroker> {
    return new ConnectedMemoryBroker(this.#store, this.#options, false);
  }

  /** The same broker, with the test's clock, counting for the test's coordinator. */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedMemoryBroker> {
    this.#store.clock = options.clock;
    this.#store.coordinator = options.coordinator;
    // A harness that starts the same app (so the same broker object) test after test sees only
    // what its own run published: the log starts afresh once no connection is left from before.
    if (this.#store.openConnections === 0 || this.#store.publishedLog === undefined) {
      this.#store.publishedLog = new Map();
    }
    return new ConnectedMemoryBroker(this.#store, this.#options, true);
  }
}

function describeMemoryServer(options: MemoryBrokerOptions): ServerDescription {
  const url = options.url;
  return {
    protocol: "memory",
    description: "in-process memory broker",
    ...(url === undefined ? {} : { host: hostFromUrl(url) }),
  };
}

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
  readonly #inbox = `_inbox.${randomUUID()}`;
  readonly #replies: ReplyWaiters;
  #inboxSubscription: MemorySubscription | undefined;

  constructor(store: MemoryStore, options: MemoryBrokerOptions, inProcess: boolean) {
    // Every connection injects (an injection is an append any client could make); an in-process one
    // records into the store's log, which the broker object's in-process connections share.
    super(
      { label: "memory", accepts: "a name, MemoryTopic or MemoryQueue" },
      { log: inProcess ? store.publishedLog : undefined },
    );
    this.#store = store;
    this.#options = options;
    this.maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    // The store's clock, read at each call: an in-process run may swap it after this connection.
    this.#replies = new ReplyWaiters(
      {
        now: () => store.clock.now(),
        setTimer: (ms, callback) => store.clock.setTimer(ms, callback),
      },
      "topic",
    );
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
    // The reply inbox is the connection's own, never adopted, so never counted as the app's: it
    // closes here, ending its reader, whose replies were acked as they came.
    await this.#inboxSubscription?.close();
    this.#replies.rejectAll(this.closedError("request"));
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
    this.#listenForReplies();
    const wait = this.#replies.wait(correlationId, timeoutMs);
    return { inbox: this.#inbox, reply: wait.reply, cancel: wait.cancel };
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

  // One inbox subscription per connection serves every request made through it.
  #listenForReplies(): void {
    if (this.#inboxSubscription !== undefined) return;
    const inbox = this.#open(new MemoryTopic(this.#inbox));
    this.#inboxSubscription = inbox;
    const loop = async () => {
      for (;;) {
        const next = await inbox.next();
        if (next.done) return;
        const reply = next.value;
        reply.ack();
        // A late or stray reply finds nobody waiting and is dropped.
        this.#replies.resolve(reply.headers.getString(headerNames.correlationId), {
          name: reply.name,
          payload: reply.payload,
          headers: reply.headers,
          partitionKey: reply.partitionKey,
        });
      }
    };
    loop().catch(() => {
      // Shutdown rejects the pull; every waiting request was rejected with it.
    });
  }
}

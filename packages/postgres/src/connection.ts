import {
  type Clock,
  type ClosedBroker,
  type ConnectedBroker,
  type ConnectionListener,
  type DescribesServer,
  HeaderMap,
  type OutgoingMessage,
  type RawMessage,
  type ServerDescription,
} from "@ruststream/core";
import {
  type Backlog,
  brokerMark,
  describeMark,
  type Injection,
  type LinkChange,
  LinkStates,
  type PendingReply,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import type { NewRow, QueueStore } from "./client/store.js";
import type { MemoryServer } from "./inProcess/memoryServer.js";
import { describePostgresServer, type PostgresBrokerOptions } from "./options.js";
import type { PostgresPublisher } from "./publisher.js";
import { type PostgresPublishOptions, type PublisherHost, rowOf } from "./publisher.js";
import { PostgresPublish } from "./publishPolicy.js";
import type { PostgresQueueDelivery } from "./queue/queueDelivery.js";
import { PostgresQueueSubscription, type QueueHost } from "./queue/queueSubscription.js";
import { PostgresReplyInbox } from "./replyInbox.js";
import { PostgresQueue } from "./sources.js";

/** What shutting down a connection left behind: core's facts say it all. */
export type ClosedPostgresBroker = ClosedBroker;

/** How a connection was made: on the server, or on the in-process stand-in. */
export interface ConnectionMode {
  readonly clock: Clock;
  /** The in-process server, for `inject` and the test's log; undefined on a real server. */
  readonly inProcess: MemoryServer | undefined;
  readonly onState: ConnectionListener | undefined;
}

/**
 * A connection: the queue table through its store, one LISTEN for the wake-ups of every
 * subscription, and the publishers. After `shutdown()` every method, and every handle it made,
 * rejects `closed`.
 */
export class ConnectedPostgresBroker
  extends TestableConnection<PostgresQueue, ClosedPostgresBroker>
  implements
    ConnectedBroker<PostgresQueue, PostgresQueueDelivery, PostgresPublisher, ClosedPostgresBroker>,
    DescribesServer,
    QueueHost,
    PublisherHost
{
  readonly [brokerMark] = "postgres";
  readonly [describeMark] = true as const;
  /** A queue keeps what was published before a subscription opened. */
  readonly backlog: Backlog = "delivered";
  readonly store: QueueStore;
  readonly clock: Clock;
  readonly #options: PostgresBrokerOptions;
  readonly #server: MemoryServer | undefined;
  readonly #links = new LinkStates();
  readonly #wakes = new Map<string, Set<() => void>>();
  readonly #inbox: PostgresReplyInbox;
  #stopListening: () => Promise<void> = async () => {};

  private constructor(store: QueueStore, options: PostgresBrokerOptions, mode: ConnectionMode) {
    super(
      { label: "PostgreSQL", accepts: "a queue name or a PostgresQueue" },
      mode.inProcess !== undefined,
      mode.onState,
    );
    this.store = store;
    this.clock = mode.clock;
    this.#options = options;
    this.#server = mode.inProcess;
    this.#links.follow((change) => this.reportState(change));
    this.#inbox = new PostgresReplyInbox(this);
  }

  /** A connection whose wake-ups are listened for: a lost listener is a lost link, found again. */
  static async open(
    store: QueueStore,
    options: PostgresBrokerOptions,
    mode: ConnectionMode,
  ): Promise<ConnectedPostgresBroker> {
    const connection = new ConnectedPostgresBroker(store, options, mode);
    const listener = {};
    connection.#stopListening = await store.listen({
      wake: (queue) => connection.#wake(queue),
      lost: (reason) => connection.#links.report(listener, { state: "reconnecting", reason }),
      restored: () => {
        connection.#links.report(listener, { state: "connected" });
        // Publishes made while nobody listened sent their wake-ups to no one: look at every queue.
        for (const queue of connection.#wakes.keys()) connection.#wake(queue);
      },
    });
    return connection;
  }

  source(name: string): PostgresQueue {
    return new PostgresQueue(name);
  }

  async subscribe(source: string | PostgresQueue): Promise<PostgresQueueSubscription> {
    this.assertOpen();
    return this.adopt(new PostgresQueueSubscription(this, this.descriptorOf(source)));
  }

  defaultPublishPolicy(): PostgresPublish {
    return new PostgresPublish();
  }

  describeServer(): ServerDescription {
    return describePostgresServer(this.#options);
  }

  /**
   * Moves the dead letters in `deadLetter` back to the queue each came from (only those from
   * `source` when given), claimable at once with their attempts counted from 0; answers how many.
   */
  async redrive(deadLetter: string, options: { source?: string } = {}): Promise<number> {
    this.assertOpen();
    return this.store.redrive(deadLetter, options.source);
  }

  protected prepareInjection(message: OutgoingMessage): Injection {
    const row = rowOf(message);
    const server = this.#server;
    if (server === undefined) throw new Error("prepareInjection on a server connection");
    return { raw: rawOf(row), deliver: () => server.insertNow([row]) };
  }

  protected async teardown(): Promise<TeardownFacts<ClosedPostgresBroker>> {
    await this.#inbox.stop(this.closedError("request"));
    await this.#stopListening().catch(() => undefined);
    await this.store.close();
    return { unflushed: 0 };
  }

  // QueueHost (assertOpen and forget come from ConnectionBase)

  wakes(queue: string, wake: () => void): () => void {
    let set = this.#wakes.get(queue);
    if (set === undefined) {
      set = new Set();
      this.#wakes.set(queue, set);
    }
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.#wakes.delete(queue);
    };
  }

  reportLink(link: object, change: LinkChange): void {
    this.#links.report(link, change);
  }

  forgetLink(link: object): void {
    this.#links.forget(link);
  }

  // PublisherHost

  recordRow(row: NewRow, _message: OutgoingMessage<PostgresPublishOptions>): void {
    this.record(rawOf(row));
  }

  awaitReply(correlationId: string, timeoutMs: number): PendingReply {
    return this.#inbox.awaitReply(correlationId, timeoutMs);
  }

  #wake(queue: string): void {
    const set = this.#wakes.get(queue);
    if (set === undefined) return;
    for (const wake of [...set]) wake();
  }
}

/** A row as `published()` lists it: the message as the table holds it. */
function rawOf(row: NewRow): RawMessage {
  const headers = new HeaderMap();
  row.headerNames.forEach((name, i) => {
    headers.set(name, row.headerValues[i] ?? new Uint8Array());
  });
  return { name: row.queue, payload: row.payload, headers, partitionKey: row.partitionKey };
}

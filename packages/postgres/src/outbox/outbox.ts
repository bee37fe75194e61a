import { randomUUID } from "node:crypto";
import {
  HeaderMap,
  type ReadonlyHeaderMap,
  type RunningApp,
  RustStreamError,
} from "@ruststream/core";
import type { Queryable } from "../client/driver.js";
import type { QueueStore } from "../client/store.js";
import { postgresHeaderNames } from "../names.js";
import { rowOf } from "../publisher.js";
import { appReports, appTargets, type OutboxAppRelayOptions } from "./appTargets.js";
import type { OutboxStates } from "./outboxStates.js";
import {
  OutboxRelay,
  type OutboxRelayOptions,
  type RelayHost,
  type RelayReports,
} from "./relay.js";

/**
 * What the outbox needs from the connection to its table: the store its publishes insert in, the
 * subscriptions its relays claim with, and the shutdown. Declared here and implemented by the
 * connection, so this file never imports it.
 */
export interface OutboxHost extends Pick<RelayHost, "subscribe"> {
  readonly store: QueueStore;
  assertOpen(): void;
  shutdown(): Promise<unknown>;
}

/** Where a message goes: the label the relay's targets know the broker by, and the name there. */
export interface OutboxDestination {
  /** The broker's label, a key of the relay's `targets` (`"kafka"`, `"events"`). */
  readonly broker: string;
  /** The topic, stream, subject or queue on that broker. */
  readonly name: string;
}

/** A message to send through the outbox: the bytes, their headers and partition key. */
export interface OutboxMessage {
  readonly payload: Uint8Array;
  readonly headers?: ReadonlyHeaderMap;
  /** The relay publishes the messages of one key in the order they were written. */
  readonly partitionKey?: Uint8Array | string;
}

/**
 * A transactional outbox: `publish(tx, destination, message)` writes the message in your open
 * transaction, beside your business rows, so it exists only if they commit; `relay(...)` runs the
 * loop that delivers each committed message to its broker, in order per partition key, and marks
 * it sent only once that broker confirmed it. The outbox table is a queue table of this package
 * (`<table>_outbox`), so its rows are claimed, leased, retried and dead-lettered by the queue's
 * own statements: a row's queue is its broker's label.
 */
export class PostgresOutbox {
  /** The outbox table, as given (`ruststream_queue_outbox`, or `app.jobs_outbox`). */
  readonly table: string;
  readonly #connected: OutboxHost;
  readonly #states: OutboxStates;
  readonly #relays = new Set<OutboxRelay>();

  /** The outbox on a connection to its table: what `PostgresBroker.connectOutbox()` makes. */
  constructor(connected: OutboxHost, table: string, states: OutboxStates) {
    this.#connected = connected;
    this.#states = states;
    this.table = table;
  }

  /**
   * Writes `message` for `destination` in `tx` (a `pg` client inside `BEGIN`, or anything with
   * `query(text, values)` on your open transaction): the row, and the wake-up sent to the relays,
   * exist only if `tx` commits. Answers the message's outbox id, which every copy the relay
   * publishes carries in `x-ruststream-outbox-id`.
   */
  async publish(
    tx: Queryable,
    destination: OutboxDestination,
    message: OutboxMessage,
  ): Promise<string> {
    this.#connected.assertOpen();
    if (typeof tx?.query !== "function") {
      throw new RustStreamError(
        "invalid-argument",
        "outbox.publish(tx, destination, message) needs your open transaction as tx (a pg client inside BEGIN, or anything with query(text, values)): the message is written with your rows",
      );
    }
    const { broker, name } = destination ?? {};
    if (typeof broker !== "string" || broker === "" || typeof name !== "string" || name === "") {
      throw new RustStreamError(
        "invalid-argument",
        'outbox.publish: destination needs a broker label and a name, for example { broker: "kafka", name: "orders" }',
      );
    }
    const id = randomUUID();
    const headers = message?.headers?.clone() ?? new HeaderMap();
    headers.set(postgresHeaderNames.outboxId, id);
    headers.set(postgresHeaderNames.outboxDestination, name);
    const key = message?.partitionKey;
    const row = rowOf({
      name: broker,
      payload: message?.payload,
      headers,
      ...(key === undefined ? {} : { partitionKey: key }),
    });
    await this.#connected.store.insert([row], tx);
    return id;
  }

  /**
   * Starts a relay: for each label of `options.targets`, a loop claiming that broker's rows and
   * publishing them through its publisher. Several relays (replicas of the service) share the work;
   * a key's rows go through one of them at a time.
   */
  relay(options: OutboxRelayOptions): Promise<OutboxRelay> {
    return this.#start(options, undefined);
  }

  /**
   * Starts a relay in a running app (in `app.afterStartup`, once its connections are open): each
   * label's messages are published through the app's publish path on its connection to
   * `options.brokers[label]` (`running.publisher`), so they carry the app's tracing headers and
   * count in its metrics, and the app stops the relay as its `stop()` begins, before it closes
   * those connections (`running.onStopping`): the publishes in flight finish and are marked. A row
   * moved to its dead letter `<label>.dead` is the app's `dead-letter` event, under the subscriber
   * `outbox:<label>` (`running.reportDeadLetter`), and a failed claim, or the outbox connection
   * losing its server (`reconnecting`, `lost`, told at once when the relay starts while it is
   * away), a `background-failure` event, source `outbox:<label>` (`running.reportBackgroundFailure`),
   * and their end (the connection back, a claim since answered) a `background-recovered` event
   * (`running.reportBackgroundRecovered`): its metrics count them, its health reads them.
   */
  async relayIn(running: RunningApp, options: OutboxAppRelayOptions): Promise<OutboxRelay> {
    const { brokers, ...rest } = options ?? ({} as OutboxAppRelayOptions);
    const relay = await this.#start(
      { ...rest, targets: appTargets(running, brokers) },
      appReports(running),
    );
    try {
      running.onStopping(() => relay.stop());
    } catch (error) {
      // The app stopped while the relay started: nothing would stop it, nor publish its messages.
      await relay.stop();
      throw error;
    }
    return relay;
  }

  async #start(
    options: OutboxRelayOptions,
    reports: RelayReports | undefined,
  ): Promise<OutboxRelay> {
    this.#connected.assertOpen();
    const connected = this.#connected;
    const states = this.#states;
    const relay = await OutboxRelay.start(
      {
        subscribe: (source) => connected.subscribe(source),
        followState: (follower) => states.follow(follower),
      },
      options,
      () => this.#relays.delete(relay),
      reports,
    );
    this.#relays.add(relay);
    return relay;
  }

  /** Stops the relays it started (each finishing the messages in flight), then disconnects. */
  async close(): Promise<void> {
    await Promise.all([...this.#relays].map((relay) => relay.stop()));
    await this.#connected.shutdown();
  }
}

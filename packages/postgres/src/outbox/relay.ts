import { setTimeout as sleep } from "node:timers/promises";
import {
  type ConnectionChange,
  type ConnectionListener,
  type Delivery,
  type Logger,
  type Publisher,
  RustStreamError,
  type SettleResult,
  silentLogger,
} from "@ruststream/core";
import { positive } from "@ruststream/core/broker";
import { postgresHeaderNames } from "../names.js";
import type { PostgresQueueDelivery, Verb } from "../queue/queueDelivery.js";
import type { PostgresQueueSubscription } from "../queue/queueSubscription.js";
import { PostgresQueue } from "../sources.js";

/** How the relay delivers: where each broker label goes, and how it retries. */
export interface OutboxRelayOptions {
  /**
   * The publisher of each broker the outbox writes for, by label (`outbox.publish`'s
   * `destination.broker`): a connected broker's publisher (in an app, `outbox.relayIn` takes the
   * app's brokers instead). Rows of a label no relay knows wait in the table until one does.
   */
  readonly targets: Readonly<Record<string, Publisher<never>>>;
  /**
   * Publishes of one message before it moves to the dead letter `<label>.dead` of the outbox table
   * (default 10), with its origin (`dead_source`, the label) and `dead_reason` `max-attempts`.
   */
  readonly maxAttempts?: number;
  /** The wait after a failed publish: `firstMs` doubled each attempt, at most `maxMs` (1 s, 60 s). */
  readonly backoff?: { readonly firstMs?: number; readonly maxMs?: number };
  /** Rows one claim takes per label (default 64): one per partition key, any number without. */
  readonly claim?: number;
  /** How long a claim holds its rows (default 30,000 ms), renewed while their publish runs. */
  readonly leaseMs?: number;
  /** The longest idle wait before looking again, behind the publishes' wake-ups (default 1000). */
  readonly pollMs?: number;
  /**
   * What marking a message sent does: delete its row (`"delete"`, the default), or keep it with
   * `done_at` the time the broker confirmed it (`"keep"`), purged after `retainMs`.
   */
  readonly sent?: "delete" | "keep";
  readonly retainMs?: number;
  /**
   * How long one publish may wait for its broker's confirmation before it counts as a failed
   * attempt (backoff, then the dead letter at `maxAttempts`). Without it (the default), a publish
   * whose client waits for its server to come back (Redis's, librdkafka's up to its
   * `message.timeout.ms`) holds its key's head, the lease renewed, until the server answers. A
   * publish that timed out may still land later: the next attempt then sends a copy with the same
   * outbox id, which an inbox drops.
   */
  readonly publishTimeoutMs?: number;
  /** How long `stop()` waits for the publishes in flight (default 10,000 ms). */
  readonly stopTimeoutMs?: number;
  /**
   * Where failed claims, publishes and settles and the rows moved to the dead letter are reported
   * (warn), with the label and outbox id (default: nowhere). In an app (`outbox.relayIn`) the dead
   * letters are also the app's `dead-letter` events, the failed claims and the outbox
   * connection's losses its `background-failure` events, and their end its `background-recovered`
   * events. The logger also tells each loss of the outbox connection (warn), its return (info),
   * and a label's claims working again after a failure (info).
   */
  readonly logger?: Logger;
  /**
   * Called once the broker confirmed a message, before its row is marked sent: to observe the
   * step, or, in a test, to stop the process there (the row is then sent again after its lease).
   */
  readonly afterPublish?: (outboxId: string) => void | Promise<void>;
}

/**
 * What a relay needs from the outbox table's connection: subscriptions to its rows, and its state
 * changes. Declared here and implemented by the outbox on its connection, so this file never
 * imports it.
 */
export interface RelayHost {
  subscribe(source: PostgresQueue): Promise<PostgresQueueSubscription>;
  /**
   * Sends the connection's later state changes to `follower` until the answer is called, and
   * first, at once, its state now if it is away (`reconnecting`, `lost`).
   */
  followState(follower: ConnectionListener): () => void;
}

/**
 * Told of what the relay does beside its publishes, besides its logger: `outbox.relayIn` makes
 * each the app's event.
 */
export interface RelayReports {
  /** A row moved to its label's dead letter, once the move is done (a `dead-letter` event). */
  deadLettered(label: string, moved: Delivery, destination: string, reason: string): void;
  /** A claim of the label's rows failed; the relay tries again (a `background-failure` event). */
  claimFailed(label: string, error: unknown): void;
  /**
   * The outbox connection lost its server (`reconnecting`) or gave up (`lost`): the label's claims
   * wait for it (a `background-failure` event). `error` is a `broker-failure` naming the state.
   */
  connectionLost(label: string, error: RustStreamError): void;
  /**
   * The label's claims work again after a failed claim or a loss of the outbox connection: the
   * connection is back and a claim since succeeded (a `background-recovered` event). Told once per
   * run of failures, and only when the connection is not away.
   */
  recovered(label: string): void;
}

/** The dead letter of a label's rows, in the outbox table. */
export function outboxDeadLetter(label: string): string {
  return `${label}.dead`;
}

const defaults = {
  maxAttempts: 10,
  firstMs: 1000,
  maxMs: 60_000,
  claim: 64,
  stopTimeoutMs: 10_000,
};
/** The first and the longest wait before a failed claim is tried again on a new subscription. */
const claimRetryFirstMs = 100;
const claimRetryMaxMs = 5000;

/**
 * A relay: one loop per broker label, each a subscription to the outbox table's rows of that label
 * (the queue's claims, leases, per-key order, retries and dead letters, unchanged). A claimed
 * message is published to its destination; once the broker confirmed it, its row is marked sent.
 * A failed publish puts the row back with a backoff; the `maxAttempts`-th moves it to the dead
 * letter. A relay that dies between the two leaves the row leased: it is published again once the
 * lease ends, carrying the same outbox id, which an inbox drops.
 */
export class OutboxRelay {
  readonly #host: RelayHost;
  readonly #options: Required<Pick<OutboxRelayOptions, "afterPublish">> & {
    readonly logger: Logger;
    readonly firstMs: number;
    readonly maxMs: number;
    readonly claim: number;
    readonly stopTimeoutMs: number;
    readonly publishTimeoutMs: number | undefined;
  };
  readonly #sources: ReadonlyMap<string, PostgresQueue>;
  readonly #subscriptions = new Set<PostgresQueueSubscription>();
  readonly #stopping = new AbortController();
  readonly #forget: () => void;
  readonly #reports: RelayReports | undefined;
  /** The labels told failing (a failed claim, the connection's loss) and not recovered since. */
  readonly #failing = new Set<string>();
  /** The labels whose last claim failed. */
  readonly #claimsFailing = new Set<string>();
  /** The outbox connection is away (`reconnecting`, `lost`), as last heard. */
  #away = false;
  #loops: Promise<void>[] = [];
  #stopped: Promise<void> | undefined;
  #unfollow: () => void = () => {};

  private constructor(
    host: RelayHost,
    options: OutboxRelayOptions,
    forget: () => void,
    reports: RelayReports | undefined,
  ) {
    const labels = Object.keys(options?.targets ?? {});
    if (labels.length === 0) {
      throw new RustStreamError(
        "invalid-argument",
        "outbox.relay({ targets }) needs a publisher per broker label, for example { targets: { kafka: publisher } }",
      );
    }
    const maxAttempts = positive("maxAttempts", options.maxAttempts, defaults.maxAttempts);
    const claim = positive("claim", options.claim, defaults.claim);
    this.#host = host;
    this.#forget = forget;
    this.#reports = reports;
    this.#options = {
      logger: options.logger ?? silentLogger,
      afterPublish: options.afterPublish ?? (() => {}),
      firstMs: positive("backoff.firstMs", options.backoff?.firstMs, defaults.firstMs),
      maxMs: positive("backoff.maxMs", options.backoff?.maxMs, defaults.maxMs),
      claim,
      stopTimeoutMs: positive("stopTimeoutMs", options.stopTimeoutMs, defaults.stopTimeoutMs),
      publishTimeoutMs:
        options.publishTimeoutMs === undefined
          ? undefined
          : positive("publishTimeoutMs", options.publishTimeoutMs, 0),
    };
    this.#sources = new Map(
      labels.map((label) => [
        label,
        new PostgresQueue(
          label,
          {
            claim,
            keyOrder: true,
            // A claim's rows are published side by side: one row of a key at a time.
            perKey: 1,
            ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
            ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
            ...(options.retainMs === undefined ? {} : { retainMs: options.retainMs }),
            ack: options.sent ?? "delete",
          },
          { maxAttempts, deadLetter: outboxDeadLetter(label) },
        ),
      ]),
    );
  }

  /**
   * Starts a loop per label of `options.targets`; `forget` runs once it stopped, `reports` (if
   * any) hears of each row moved to a dead letter and each failed claim.
   */
  static async start(
    host: RelayHost,
    options: OutboxRelayOptions,
    forget: () => void,
    reports?: RelayReports,
  ): Promise<OutboxRelay> {
    const relay = new OutboxRelay(host, options, forget, reports);
    const targets = options.targets;
    const opened = await Promise.all(
      [...relay.#sources.entries()].map(async ([label, source]) => ({
        label,
        target: targets[label] as Publisher<never>,
        subscription: await relay.#subscribe(source),
      })),
    );
    relay.#loops = opened.map(({ label, target, subscription }) =>
      relay.#run(label, target, subscription),
    );
    relay.#unfollow = host.followState((change) => relay.#connectionChanged(change));
    return relay;
  }

  /**
   * Stops claiming and finishes the messages in flight (published and marked, or put back), waiting
   * `stopTimeoutMs` at most: a publish still waiting then (its broker away, its client waiting for
   * it) is left to the connection's shutdown, which gives its row back unmarked, to be sent again.
   */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping.abort();
      this.#unfollow();
      await Promise.all([...this.#subscriptions].map((s) => s.close()));
      const bound = new AbortController();
      await Promise.race([
        Promise.all(this.#loops),
        sleep(this.#options.stopTimeoutMs, undefined, { signal: bound.signal }).catch(() => {}),
      ]);
      bound.abort();
      this.#forget();
    })();
    return this.#stopped;
  }

  async #subscribe(source: PostgresQueue): Promise<PostgresQueueSubscription> {
    const subscription = await this.#host.subscribe(source);
    // Rows claimed past the cap (a relay died on each of their publishes) are moved at the claim.
    subscription.onMoved((moved, destination, reason) =>
      this.#deadLettered(source.name, moved, destination, reason),
    );
    // Each claim the server answered, rows or none: a failed claim's end is heard at once.
    subscription.onClaimed(() => this.#claimWorked(source.name));
    this.#subscriptions.add(subscription);
    return subscription;
  }

  async #run(
    label: string,
    target: Publisher<never>,
    first: PostgresQueueSubscription,
  ): Promise<void> {
    const source = this.#sources.get(label) as PostgresQueue;
    let subscription: PostgresQueueSubscription | undefined = first;
    let failures = 0;
    while (!this.#stopping.signal.aborted) {
      try {
        subscription ??= await this.#subscribe(source);
        const batch = await subscription.nextBatch(this.#options.claim);
        failures = 0;
        // One row per partition key in a claim (the key's head), so they go side by side.
        const claimed = subscription;
        await Promise.all(
          batch.map((delivery) => this.#relayOne(label, target, claimed, delivery)),
        );
      } catch (error) {
        if (this.#stopping.signal.aborted) break;
        this.#options.logger.warn({ broker: label, error }, "outbox relay: claiming failed");
        this.#claimsFailing.add(label);
        this.#failing.add(label);
        this.#report({ broker: label }, "the failed claim", (reports) =>
          reports.claimFailed(label, error),
        );
        if (subscription !== undefined) {
          this.#subscriptions.delete(subscription);
          await subscription.close().catch(() => undefined);
          subscription = undefined;
        }
        const wait = Math.min(claimRetryFirstMs * 2 ** failures++, claimRetryMaxMs);
        await sleep(wait, undefined, { signal: this.#stopping.signal }).catch(() => undefined);
      }
    }
  }

  async #relayOne(
    label: string,
    target: Publisher<never>,
    subscription: PostgresQueueSubscription,
    delivery: PostgresQueueDelivery,
  ): Promise<void> {
    const names = postgresHeaderNames;
    const headers = delivery.headers.clone();
    const id = headers.getString(names.outboxId);
    const destination = headers.getString(names.outboxDestination);
    const log = { broker: label, outboxId: id, row: String(delivery.position) };
    if (destination === undefined || destination === "" || id === undefined) {
      // Not a row outbox.publish wrote: nowhere to send it, so to the dead letter at once.
      this.#options.logger.warn(log, "outbox relay: a row without its outbox headers");
      await this.#nack(label, log, subscription, delivery, { kind: "drop" });
      return;
    }
    headers.delete(names.outboxDestination);
    try {
      await this.#publish(
        target,
        {
          name: destination,
          payload: delivery.payload,
          headers,
          ...(delivery.partitionKey === undefined ? {} : { partitionKey: delivery.partitionKey }),
        },
        destination,
      );
    } catch (error) {
      const delay = Math.min(
        this.#options.firstMs * 2 ** Math.max(0, delivery.redeliveryCount - 1),
        this.#options.maxMs,
      );
      this.#options.logger.warn(
        { ...log, destination, attempt: delivery.redeliveryCount, retryInMs: delay, error },
        "outbox relay: publish failed",
      );
      // At the cap the queue moves the row to the dead letter instead.
      await this.#nack(label, log, subscription, delivery, { kind: "requeue", delayMs: delay });
      return;
    }
    await this.#options.afterPublish(id);
    await this.#settle(log, delivery.ack());
  }

  /** The publish, failed with `timeout` once `publishTimeoutMs` passed without its confirmation. */
  async #publish(
    target: Publisher<never>,
    message: Parameters<Publisher<never>["publish"]>[0],
    destination: string,
  ): Promise<void> {
    const ms = this.#options.publishTimeoutMs;
    const publishing = target.publish(message);
    if (ms === undefined) {
      await publishing;
      return;
    }
    // Lost the race, it may still settle: its outcome is then nobody's to report.
    publishing.catch(() => undefined);
    const bound = new AbortController();
    try {
      await Promise.race([
        publishing,
        sleep(ms, undefined, { signal: bound.signal }).then(() => {
          throw new RustStreamError(
            "timeout",
            `outbox relay: the publish to "${destination}" was not confirmed within publishTimeoutMs (${ms} ms); it counts as a failed attempt and is sent again after its backoff`,
          );
        }),
      ]);
    } finally {
      bound.abort();
    }
  }

  /** Puts the row back (`requeue`) or away (`drop`), reporting a move to the dead letter once done. */
  async #nack(
    label: string,
    log: object,
    subscription: PostgresQueueSubscription,
    delivery: PostgresQueueDelivery,
    verb: Exclude<Verb, { kind: "ack" }>,
  ): Promise<void> {
    const moving = subscription.deadLetterOf(delivery, verb);
    const settled =
      verb.kind === "drop" ? delivery.nack({ requeue: false }) : delivery.nackAfter(verb.delayMs);
    if ((await this.#settle(log, settled)) && moving !== undefined) {
      this.#deadLettered(label, delivery, moving.to, moving.reason);
    }
  }

  /** A settle that failed (the lease ended meanwhile) leaves the row to the next claim: false. */
  async #settle(log: object, settled: SettleResult): Promise<boolean> {
    try {
      await settled;
      return true;
    } catch (error) {
      this.#options.logger.warn({ ...log, error }, "outbox relay: marking the row failed");
      return false;
    }
  }

  #deadLettered(label: string, moved: Delivery, destination: string, reason: string): void {
    const outboxId = moved.headers.getString(postgresHeaderNames.outboxId);
    this.#options.logger.warn(
      { broker: label, outboxId, row: String(moved.position), destination, reason },
      "outbox relay: the row moved to its dead letter",
    );
    this.#report({ broker: label, outboxId }, "the dead letter", (reports) =>
      reports.deadLettered(label, moved, destination, reason),
    );
  }

  /**
   * The outbox connection's new state: a loss is logged and reported for each label (their claims
   * wait for it, retrying inside the claim, so no failed claim tells it), a return logged.
   */
  #connectionChanged(change: ConnectionChange): void {
    if (this.#stopping.signal.aborted) return;
    const { state, reason } = change;
    if (state === "connected") {
      this.#away = false;
      this.#options.logger.info({ state }, "outbox relay: the outbox connection is back");
      for (const label of this.#sources.keys()) this.#recoveredIfSo(label);
      return;
    }
    // closed: the outbox was closed, which stops its relays.
    if (state !== "reconnecting" && state !== "lost") return;
    this.#away = true;
    this.#options.logger.warn({ state, reason }, `outbox relay: the outbox connection is ${state}`);
    for (const label of this.#sources.keys()) {
      this.#failing.add(label);
      const error = new RustStreamError(
        "broker-failure",
        `outbox relay: the outbox connection is ${state} (${reason ?? "no reason given"}); the claims of "${label}" wait for it`,
      );
      this.#report({ broker: label }, "the lost connection", (reports) =>
        reports.connectionLost(label, error),
      );
    }
  }

  /** A claim of the label's rows the server answered: its failure, if any, has ended. */
  #claimWorked(label: string): void {
    if (this.#claimsFailing.delete(label)) this.#recoveredIfSo(label);
  }

  /**
   * Tells the label recovered if it was told failing and nothing fails now: the connection is not
   * away, and its last claim did not fail.
   */
  #recoveredIfSo(label: string): void {
    if (this.#away || this.#claimsFailing.has(label) || !this.#failing.delete(label)) return;
    this.#options.logger.info({ broker: label }, "outbox relay: claiming works again");
    this.#report({ broker: label }, "the recovery", (reports) => reports.recovered(label));
  }

  /** One report; what it throws is logged (with `log`'s fields), and the relay goes on. */
  #report(log: object, what: string, report: (reports: RelayReports) => void): void {
    if (this.#reports === undefined) return;
    try {
      report(this.#reports);
    } catch (error) {
      this.#options.logger.warn({ ...log, error }, `outbox relay: reporting ${what} failed`);
    }
  }
}

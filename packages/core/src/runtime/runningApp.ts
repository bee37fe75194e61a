import type { Broker, ConnectedBroker } from "../broker/contract.js";
import type { Codec } from "../codec/codec.js";
import type { Receipt } from "../message.js";
import type { Publisher } from "../publisher.js";
import type {
  BackgroundFailureReport,
  BackgroundRecoveryReport,
} from "./backgroundFailureReport.js";
import type { PublishOptionsOf } from "./brokerScope.js";
import type { DeadLetterReport } from "./deadLetterReport.js";
import type { PublishOptions, RequestOptions } from "./out.js";

/**
 * Where a running app is in its life; a health probe reads it. `starting` until `start()` resolves
 * (brokers connected, subscriptions pulling, startup hooks run), then `ready`.
 */
export type AppState = "starting" | "ready" | "stopping" | "stopped";

/** What stopping the app found. */
export interface StopReport {
  /** True when a fail-fast policy (or a failed subscription) stopped the app: exit non-zero. */
  readonly failed: boolean;
  /** What made it fail, when it failed. */
  readonly failure?: unknown;
  /** True when handlers were still running at the drain timeout and their `ctx.signal` fired. */
  readonly aborted: boolean;
  /** Messages the brokers had accepted but not confirmed when they closed. */
  readonly unflushed: number;
}

/** `options` is the chosen broker's per-message settings, checked by that broker when it publishes. */
export interface AppPublishOptions extends PublishOptions<unknown> {
  /** The broker to publish on (default: the first one registered). */
  readonly broker?: Broker;
  /** Default JSON. */
  readonly codec?: Codec<unknown>;
}

export interface AppRequestOptions extends RequestOptions<unknown> {
  readonly broker?: Broker;
  readonly codec?: Codec<unknown>;
}

/** An app whose subscriptions are open: what `app.start()` resolves to. */
export interface RunningApp {
  readonly state: AppState;
  /** Resolves once the app has stopped, whether by `stop()` or by a fail-fast failure. */
  readonly stopped: Promise<StopReport>;
  /** The brokers, in the order they were registered. */
  readonly brokers: readonly Broker[];
  /** The subscribers' names. */
  readonly subscribers: readonly string[];
  /** The connection the app holds for `broker` (default: the first). */
  connection(broker?: Broker): ConnectedBroker;
  /** Publishes from outside any handler (an HTTP route, a startup task); rejects after `stop()`. */
  publish(name: string, value: unknown, options?: AppPublishOptions): Promise<Receipt>;
  /** Sends a request and resolves with the decoded reply. */
  request(name: string, value: unknown, options: AppRequestOptions): Promise<unknown>;
  /**
   * A publisher of messages already encoded (their payload bytes, headers and partition key) on
   * the app's connection to `broker` (default: the first), through the app's publish path as
   * `publish` goes: its publish middleware, the broker's publisher, then a `publish` event (purpose
   * `app`). For work that sends messages the app did not encode, such as an outbox relay: its
   * messages get the app's tracing headers and are counted in its metrics. Its publishes reject
   * with `closed` once the app stopped.
   */
  publisher<TBroker extends Broker>(broker?: TBroker): Publisher<PublishOptionsOf<TBroker>>;
  /**
   * Runs `task` as the app stops: as `stop()` begins, beside the subscribers' stop and the drain of
   * their handlers, and before the connections close, which wait for it (within the shutdown
   * timeout, as the drain does). For work running on the app's connections that must finish while
   * they are open, such as an outbox relay's publishes in flight. A task that throws is logged and
   * the stop goes on. Added while the app is stopping, it runs at once; after it stopped, this
   * throws `closed`.
   */
  onStopping(task: () => void | Promise<void>): void;
  /**
   * Emits a `dead-letter` event for a message that work beside the handlers moved to a dead letter
   * (an outbox relay's row moved to `<label>.dead`), as a subscriber's would be: the app's observers
   * see it, and the metrics count it under `report.subscriber` and `report.destination`. Emitted in
   * any state, a stopping app's too: the move happened, whoever still watches counts it.
   */
  reportDeadLetter(report: DeadLetterReport): void;
  /**
   * Emits a `background-failure` event for a failure of work beside the handlers, outside any
   * delivery (an outbox relay's claim the server refused), which that work retries: the
   * app's observers see it, and the metrics count it under `report.source`. Emitted in any state,
   * a stopping app's too. A report without a `source` or an `error` throws `invalid-argument`.
   * The source counts as failing until `reportBackgroundRecovered` says otherwise.
   */
  reportBackgroundFailure(report: BackgroundFailureReport): void;
  /**
   * Emits a `background-recovered` event for `report.source` if it has a failure not yet recovered
   * (its `background-failure` came, and no recovery since), and nothing otherwise: the work may
   * report each success, and its observers hear the end of each run of failures once. Emitted in
   * any state. A report without a `source` throws `invalid-argument`.
   */
  reportBackgroundRecovered(report: BackgroundRecoveryReport): void;
  /** Handlers, replies and settles the runtime started and has not finished. */
  readonly inFlight: number;
  /** Resolves once no handler, reply or settle the runtime started is still in progress. */
  whenIdle(): Promise<void>;
  /**
   * Stops pulling, drains running handlers within the shutdown timeout (then aborts their
   * `ctx.signal`), publishes delayed retry copies, and shuts the brokers down. Calling it again
   * returns the same report.
   */
  stop(): Promise<StopReport>;
}

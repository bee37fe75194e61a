import type { ConnectionState } from "../broker/contract.js";
import type { BacklogCounts } from "../capabilities.js";
import type { Delivery } from "../delivery.js";
import type { OutgoingMessage } from "../message.js";
import type {
  BackgroundFailureReport,
  BackgroundRecoveryReport,
} from "./backgroundFailureReport.js";
import type { DeadLetterReport } from "./deadLetterReport.js";
import type { OutcomeKind } from "./outcome.js";
import type { AppState } from "./runningApp.js";

/**
 * How a delivery was finally settled, as observers see it. `settled-by-handler` means the handler
 * settled the raw delivery itself, so the runtime did not. An `undecodable` outcome is settled by
 * the decode policy, so it shows as what that policy chose.
 */
export type SettledAs = Exclude<OutcomeKind, "undecodable"> | "settled-by-handler" | "left-open";

/** A handler ran (or a decode failure was settled) and the runtime settled the delivery. */
export interface OutcomeEvent {
  readonly type: "outcome";
  /** The subscriber's name (its source's name unless `.name()` set one). */
  readonly subscriber: string;
  readonly delivery: Delivery;
  /** The decoded message, or `undefined` when it failed to decode. */
  readonly message: unknown;
  /** What the handler asked for, or what the failure policy chose. */
  readonly outcome: SettledAs;
  /** The delivery's attempt number (1 on the first delivery). */
  readonly attempt: number;
  /** Handler start to settle, in milliseconds of the app's clock. */
  readonly durationMs: number;
  /** What the handler threw (or why its reply failed) when it failed; `undefined` otherwise. */
  readonly error: unknown;
  /**
   * True when the handler ran: false for the runtime's own decode and validation failures, true
   * for a handler's `undecodable` outcome.
   */
  readonly handled: boolean;
}

/**
 * A payload that did not decode, a decoded value its schema rejected, or one its handler refused
 * with an `undecodable` outcome.
 */
export interface DecodeFailureEvent {
  readonly type: "decode-failure";
  readonly subscriber: string;
  readonly delivery: Delivery;
  readonly error: unknown;
}

/**
 * A message sent to a dead letter: published there by the runtime, or, on a source whose broker
 * moves failing messages itself (`copies: "broker"`, a declared cap and dead letter), settled the
 * way that makes the broker move it: a drop or a dead-letter outcome (the broker's "rejected"), a
 * retry at the declared cap (its "max-attempts").
 */
export interface DeadLetterEvent extends DeadLetterReport {
  readonly type: "dead-letter";
}

/**
 * What a publish was for: `"app"` a `publish` on the running app, `"request"` a `request` (there or
 * on a `ctx.out` publisher), `"out"` a `ctx.out` publish.
 */
export type PublishPurpose = "reply" | "out" | "retry-copy" | "dead-letter" | "app" | "request";

/**
 * A publish the runtime made, confirmed or failed. A request's comes once its reply came (`ok`), or
 * with the error it failed with, a timeout waiting for the reply included.
 */
export interface PublishEvent {
  readonly type: "publish";
  readonly name: string;
  /** Which of the app's brokers it went to, as its `broker-connection` event names it. */
  readonly broker: string;
  /** The message as it reached the broker, after publish middleware. */
  readonly message: OutgoingMessage;
  readonly purpose: PublishPurpose;
  readonly ok: boolean;
  readonly error?: unknown;
}

/**
 * The running app moved on: `starting` as `start()` begins, `ready` once every broker is connected,
 * every subscription pulls and the startup hooks have run (as `start()` resolves), `stopping` as
 * `stop()` begins (or a fail-fast failure stops it), `stopped` once the brokers are shut down (or a
 * start failed: then with its `failure`).
 */
export interface AppStateEvent {
  readonly type: "app-state";
  readonly state: AppState;
  /** Why the app stopped, when a failure stopped it (a failed start, a fail-fast policy). */
  readonly failure?: unknown;
}

/**
 * A broker connection of the app changed state: `connected` as it connects, then each change while
 * the app runs (`reconnecting` while its client retries after losing the server, `connected` again
 * once it is back, `lost` when the client gives up), and `closed` at shutdown. `broker` names it:
 * its kind, with a number from the second broker of a kind on (`"redis"`, `"redis-2"`), in
 * registration order.
 */
export interface BrokerConnectionEvent {
  readonly type: "broker-connection";
  readonly broker: string;
  readonly kind: string;
  readonly state: ConnectionState;
  /** The client's reason, for `reconnecting` and `lost`. */
  readonly reason?: string;
}

/**
 * A subscriber's subscription started pulling, or ended while the app was running (not by `stop()`):
 * the broker ended it (a stream file its writer closed with an end-of-stream marker), or it failed
 * (then with `error`, and the app stops).
 */
export interface SubscriptionEvent {
  readonly type: "subscription";
  readonly subscriber: string;
  readonly state: "started" | "ended";
  readonly error?: unknown;
  /**
   * The subscriber's deliveries in a handler now (started, not yet settled), read when called: a
   * gauge reads it when scraped, so nothing is emitted per message for it.
   */
  readonly inFlight: () => number;
  /**
   * How many messages wait in the subscriber's source, by state, asked of its broker when called
   * (a gauge asks when scraped); only where the broker answers it (`ReportsBacklog`), absent
   * otherwise. It may reject, and takes what the broker's read takes: bound the wait.
   */
  readonly backlog?: () => Promise<BacklogCounts>;
}

/**
 * Work beside the handlers failed, outside any delivery, and goes on (it retries): an outbox
 * relay's claim whose statement the server refused, its connection's loss. Reported by that work
 * (`running.reportBackgroundFailure`), emitted in any state of the app: the failure happened. The
 * source counts as failing from then until its `background-recovered` event.
 */
export interface BackgroundFailureEvent extends BackgroundFailureReport {
  readonly type: "background-failure";
}

/**
 * Work beside the handlers that failed works again: its failure (one `background-failure` or
 * several in a row, of the same `source`) has ended. Reported by that work
 * (`running.reportBackgroundRecovered`), emitted once per run of failures: only for a source with
 * a failure not yet recovered, so it always follows that source's `background-failure` event.
 */
export interface BackgroundRecoveredEvent extends BackgroundRecoveryReport {
  readonly type: "background-recovered";
}

/**
 * A message was taken by the subscriber's subscription `waitedMs` after it was due (a queue row's
 * run time to its claim): reported by a broker that knows it (`ReportsWaits`), per message, built
 * only when someone observes.
 */
export interface WaitEvent {
  readonly type: "wait";
  readonly subscriber: string;
  readonly waitedMs: number;
}

/** Every event the runtime emits. */
export type RuntimeEvent =
  | OutcomeEvent
  | DecodeFailureEvent
  | DeadLetterEvent
  | PublishEvent
  | AppStateEvent
  | BrokerConnectionEvent
  | SubscriptionEvent
  | BackgroundFailureEvent
  | BackgroundRecoveredEvent
  | WaitEvent;

/**
 * Receives runtime events, synchronously, on the dispatch path: keep it cheap (count, record a
 * duration) and never throw; a throwing observer is logged and otherwise ignored. The per-message
 * events (`outcome`, `publish`) are built only when some observer is registered.
 */
export type Observer = (event: RuntimeEvent) => void;

import type { Delivery } from "../delivery.js";
import type { ReadonlyHeaderMap } from "../headerMap.js";
import type { Logger } from "../logger.js";
import type { OutPublishers } from "./out.js";

/** What a handler gets beside its message; `TOptions` is its broker's per-message publish settings. */
export interface HandlerContext<TOut = Record<never, never>, TOptions = never> {
  /** The topic, stream or queue the delivery came from. */
  readonly name: string;
  /** The consumer group the subscriber reads in, where its broker has one (see `Subscription.group`). */
  readonly group: string | undefined;
  /** The raw delivery; settling it by hand means the runtime will not (its outcome is ignored). */
  readonly delivery: Delivery;
  readonly headers: ReadonlyHeaderMap;
  /** Which delivery of this message this is, counting from 1 (see `maxAttempts`). */
  readonly attempt: number;
  /** The app's logger, with the subscriber's name on every line. */
  readonly log: Logger;
  /** Aborts when shutdown's drain timeout runs out: stop waiting and return. */
  readonly signal: AbortSignal;
  /**
   * The publishers declared with `.publishes({ ... })`. What they publish carries this delivery as
   * its cause, and its trace context (`traceparent`, `tracestate`) unless the call sets its own.
   */
  readonly out: OutPublishers<TOut, TOptions>;
}

/** What a batch handler gets beside its messages. */
export interface BatchContext<TOut = Record<never, never>, TOptions = never> {
  readonly name: string;
  /** As a handler's. */
  readonly group: string | undefined;
  /** The deliveries of the messages, in the same order. */
  readonly deliveries: readonly Delivery[];
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** As a handler's, but with no one cause: what these publish names no delivery. */
  readonly out: OutPublishers<TOut, TOptions>;
}

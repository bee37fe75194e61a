import type { Delivery } from "../delivery.js";

/**
 * What a `dead-letter` event says of a message sent to a dead letter: by a subscriber's runtime,
 * or by work beside the handlers that reports it (`running.reportDeadLetter`). Its own file, so the
 * events and the running app both take it without importing each other.
 */
export interface DeadLetterReport {
  /** The subscriber's name, or the name the reporting work counts under (`outbox:<label>`). */
  readonly subscriber: string;
  readonly delivery: Delivery;
  /** The dead-letter destination. */
  readonly destination: string;
  readonly reason: string;
  /** Who moves it: the runtime publishes a copy, or the broker moves it on the settle. */
  readonly movedBy: "runtime" | "broker";
}

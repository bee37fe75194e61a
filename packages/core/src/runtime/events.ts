import type { Delivery } from "../delivery.js";
import type { OutgoingMessage } from "../message.js";
import type { OutcomeKind } from "./outcome.js";

/**
 * How a delivery was finally settled, as observers see it. `settled-by-handler` means the handler
 * settled the raw delivery itself, so the runtime did not.
 */
export type SettledAs = OutcomeKind | "settled-by-handler" | "left-open";

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
  /** What the handler threw (or why its reply failed), when it failed. */
  readonly error?: unknown;
  /** True when the handler ran (false for decode and validation failures). */
  readonly handled: boolean;
}

/** A payload that did not decode, or a decoded value its schema rejected. */
export interface DecodeFailureEvent {
  readonly type: "decode-failure";
  readonly subscriber: string;
  readonly delivery: Delivery;
  readonly error: unknown;
}

/** A message sent to a dead letter by the runtime. */
export interface DeadLetterEvent {
  readonly type: "dead-letter";
  readonly subscriber: string;
  readonly delivery: Delivery;
  /** The dead-letter destination. */
  readonly destination: string;
  readonly reason: string;
}

/** What a publish was for. */
export type PublishPurpose = "reply" | "out" | "retry-copy" | "dead-letter" | "app";

/** A publish the runtime made, confirmed or failed. */
export interface PublishEvent {
  readonly type: "publish";
  readonly name: string;
  /** The message as it reached the broker, after publish middleware. */
  readonly message: OutgoingMessage;
  readonly purpose: PublishPurpose;
  readonly ok: boolean;
  readonly error?: unknown;
}

/** Every event the runtime emits. */
export type RuntimeEvent = OutcomeEvent | DecodeFailureEvent | DeadLetterEvent | PublishEvent;

/**
 * Receives runtime events, synchronously, on the dispatch path: keep it cheap (count, record a
 * duration) and never throw; a throwing observer is logged and otherwise ignored.
 */
export type Observer = (event: RuntimeEvent) => void;

import { RustStreamError } from "../errors.js";

const outcomeMark: unique symbol = Symbol.for("@ruststream/core.outcome");

/**
 * What a handler asks the runtime to do with its delivery. Returning nothing (or a reply) means
 * `ack`. Build one with {@link ack}, {@link retry}, {@link retryAfter}, {@link drop},
 * {@link deadLetter} or {@link undecodable}; the runtime applies it, so a handler never settles by
 * hand.
 */
export type Outcome =
  | { readonly [outcomeMark]: true; readonly kind: "ack" }
  | { readonly [outcomeMark]: true; readonly kind: "retry" }
  | { readonly [outcomeMark]: true; readonly kind: "retry-after"; readonly delayMs: number }
  | { readonly [outcomeMark]: true; readonly kind: "drop" }
  | { readonly [outcomeMark]: true; readonly kind: "dead-letter"; readonly reason: string }
  | { readonly [outcomeMark]: true; readonly kind: "undecodable"; readonly error: unknown };

/** The kinds of outcome, as events and test assertions name them. */
export type OutcomeKind = Outcome["kind"];

const ackOutcome: Outcome = Object.freeze({ [outcomeMark]: true as const, kind: "ack" as const });
const retryOutcome: Outcome = Object.freeze({
  [outcomeMark]: true as const,
  kind: "retry" as const,
});
const dropOutcome: Outcome = Object.freeze({ [outcomeMark]: true as const, kind: "drop" as const });

/** Done with it. */
export function ack(): Outcome {
  return ackOutcome;
}

/** Bring it back now; counts against `maxAttempts`. */
export function retry(): Outcome {
  return retryOutcome;
}

/** Bring it back after `delayMs`; counts against `maxAttempts`. */
export function retryAfter(delayMs: number): Outcome {
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    throw new RustStreamError(
      "invalid-argument",
      `retryAfter(${delayMs}): give a finite delay in milliseconds, 0 or more`,
    );
  }
  return { [outcomeMark]: true, kind: "retry-after", delayMs };
}

/** Give up on it without a trace (the broker may apply its own dead letter). */
export function drop(): Outcome {
  return dropOutcome;
}

/**
 * Send it, as it arrived, to the subscriber's declared dead letter with `reason` in its origin.
 * Without a declared dead letter it is dropped, with a warning.
 */
export function deadLetter(reason = "handler"): Outcome {
  return { [outcomeMark]: true, kind: "dead-letter", reason };
}

/**
 * Refuse it as a payload no handler can read: for a check the handler makes itself on the decoded
 * message (a framework's validation, a version it does not know). Settled by the subscriber's
 * `failure.decode` policy exactly as a payload that failed to decode or validate (`drop`, the dead
 * letter with reason `decode`, or `fail-fast`, which stops the app with `error` as its failure),
 * with a `decode-failure` event carrying `error`; never retried, as another delivery is refused
 * again.
 */
export function undecodable(error: unknown): Outcome {
  return { [outcomeMark]: true, kind: "undecodable", error };
}

/** True for an outcome built by any copy of core in this process. */
export function isOutcome(value: unknown): value is Outcome {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [outcomeMark]?: unknown })[outcomeMark] === true
  );
}

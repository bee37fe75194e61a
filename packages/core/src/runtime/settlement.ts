import { attemptOf } from "../attempt.js";
import type { Delivery } from "../delivery.js";
import type { Logger } from "../logger.js";
import type { DispatchHost } from "./dispatchHost.js";
import type { SettledAs } from "./events.js";
import type { Outcome } from "./outcome.js";
import type { BrokerMove, Redelivery } from "./redelivery.js";
import type { Settler } from "./settler.js";
import type { DecodePolicy, ErrorPolicy } from "./subscriberSpec.js";

/** One subscriber's policies, resolved at startup. */
export interface SettlementOptions {
  readonly subscriber: string;
  readonly log: Logger;
  /** Deliveries a message gets before it is given up. */
  readonly cap: number;
  /** Where the broker applies the cap and the dead letter itself (only its own requeue counts). */
  readonly brokerMoves: BrokerMove | undefined;
  readonly deadLetter: string | undefined;
  readonly errorPolicy: ErrorPolicy;
  readonly decodePolicy: DecodePolicy;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
}

/**
 * Settles each delivery by its outcome and the subscriber's failure policy: ack, drop, retry now or
 * later within the `maxAttempts` cap (a requeue, else a copy), give up to the dead letter or a drop,
 * and reports what became of it.
 */
export class Settlement {
  /**
   * Deliveries in a handler now: counted up where a handler starts, down as its outcome is reported
   * (every handled delivery reaches `emit` exactly once), whether or not anyone observes.
   */
  inHandler = 0;
  readonly #host: DispatchHost;
  readonly #settler: Settler;
  readonly #redelivery: Redelivery;
  readonly #options: SettlementOptions;

  constructor(
    host: DispatchHost,
    settler: Settler,
    redelivery: Redelivery,
    options: SettlementOptions,
  ) {
    this.#host = host;
    this.#settler = settler;
    this.#redelivery = redelivery;
    this.#options = options;
  }

  apply(
    delivery: Delivery,
    message: unknown,
    outcome: Outcome,
    started: number,
    error?: unknown,
    handled = true,
  ): void {
    if (delivery.settled) {
      this.emit(delivery, message, "settled-by-handler", started, error, handled);
      return;
    }
    switch (outcome.kind) {
      case "ack":
        this.#settler.ack(delivery);
        break;
      case "drop":
        this.#redelivery.drop(delivery);
        break;
      case "retry": {
        this.retry(delivery, message, undefined, started, error, handled);
        return;
      }
      case "retry-after": {
        this.retry(delivery, message, outcome.delayMs, started, error, handled);
        return;
      }
      case "dead-letter":
        this.#redelivery.deadLetter(delivery, outcome.reason);
        break;
      case "undecodable":
        this.decodeFailed(delivery, outcome.error, message, started, handled);
        return;
    }
    this.emit(delivery, message, outcome.kind, started, error, handled);
  }

  /** The handler threw or rejected. */
  failed(delivery: Delivery, message: unknown, error: unknown, started: number): void {
    const { log, errorPolicy } = this.#options;
    if (delivery.settled) {
      log.error({ error }, "the handler failed after settling its delivery");
      this.emit(delivery, message, "settled-by-handler", started, error, true);
      return;
    }
    const attempt = attemptOf(delivery);
    log.error({ error, attempt, policy: errorPolicy }, "the handler failed");
    switch (errorPolicy) {
      case "retry": {
        // A broker-moved source counts and moves by itself: only its own requeue reaches its cap.
        const delay = this.#options.brokerMoves !== undefined ? undefined : this.backoff(attempt);
        this.retry(delivery, message, delay, started, error, true);
        return;
      }
      case "drop":
        this.#redelivery.drop(delivery);
        this.emit(delivery, message, "drop", started, error, true);
        return;
      case "dead-letter":
        this.#redelivery.deadLetter(delivery, "error");
        this.emit(delivery, message, "dead-letter", started, error, true);
        return;
      case "fail-fast":
        this.#host.failFast(this.#options.subscriber, error);
        this.emit(delivery, message, "left-open", started, error, true);
        return;
    }
  }

  /**
   * The payload did not decode or validate, or its handler refused it as undecodable (then
   * `handled`, with the message it was given): never retried, settled by the decode policy.
   */
  decodeFailed(
    delivery: Delivery,
    error: unknown,
    message: unknown = undefined,
    started = 0,
    handled = false,
  ): void {
    const { subscriber, log, decodePolicy } = this.#options;
    this.#host.emit?.({ type: "decode-failure", subscriber, delivery, error });
    // At error: a payload no handler can read is a sender's bug or worse, and nothing retries it.
    log.error(
      { error, position: String(delivery.position), policy: decodePolicy },
      "message failed to decode",
    );
    switch (decodePolicy) {
      case "drop":
        this.#redelivery.drop(delivery);
        this.emit(delivery, message, "drop", started, error, handled);
        return;
      case "dead-letter":
        this.#redelivery.deadLetter(delivery, "decode");
        this.emit(delivery, message, "dead-letter", started, error, handled);
        return;
      case "fail-fast":
        this.#host.failFast(subscriber, error);
        this.emit(delivery, message, "left-open", started, error, handled);
        return;
    }
  }

  backoff(attempt: number): number {
    const { backoffInitialMs, backoffMaxMs } = this.#options;
    return Math.min(backoffMaxMs, backoffInitialMs * 2 ** Math.max(0, attempt - 1));
  }

  /** Every attempt is spent: dead letter where one is declared, else drop. */
  giveUp(
    delivery: Delivery,
    message: unknown,
    attempt: number,
    started: number,
    error: unknown,
    handled: boolean,
  ): void {
    if (this.#options.deadLetter !== undefined) {
      this.#redelivery.deadLetter(delivery, "max-attempts");
      this.emit(delivery, message, "dead-letter", started, error, handled);
      return;
    }
    this.#options.log.error(
      { attempt, position: String(delivery.position) },
      "giving up: maxAttempts reached and no dead letter declared, so the message is dropped",
    );
    this.#settler.drop(delivery);
    this.emit(delivery, message, "drop", started, error, handled);
  }

  /** Brings a delivery back now (`delayMs` undefined) or later, within the `maxAttempts` cap. */
  retry(
    delivery: Delivery,
    message: unknown,
    delayMs: number | undefined,
    started: number,
    error: unknown,
    handled: boolean,
  ): void {
    const attempt = attemptOf(delivery);
    const moves = this.#options.brokerMoves;
    if (moves === undefined) {
      if (attempt >= this.#options.cap) {
        this.giveUp(delivery, message, attempt, started, error, handled);
        return;
      }
    } else if (attempt >= moves.cap) {
      // The broker moves what is nacked at its cap rather than bring it back.
      this.#redelivery.reportBrokerMove(delivery, moves.deadLetter, "max-attempts");
    }
    const redelivery = this.#redelivery;
    if (delayMs === undefined) {
      this.#settler.settle(
        () => delivery.nack({ requeue: true }),
        () => redelivery.copyThenAck(delivery),
      );
      this.emit(delivery, message, "retry", started, error, handled);
      return;
    }
    this.#settler.settle(
      () => delivery.nackAfter(delayMs),
      () => redelivery.copyLaterThenAck(delivery, delayMs),
    );
    this.emit(delivery, message, "retry-after", started, error, handled);
  }

  /** Reports what became of a delivery, when anyone observes. */
  emit(
    delivery: Delivery,
    message: unknown,
    outcome: SettledAs,
    started: number,
    error: unknown,
    handled: boolean,
  ): void {
    if (handled) this.inHandler--;
    const emit = this.#host.emit;
    if (emit === undefined) return;
    // One shape for every outcome (error present, undefined when none): no spread on the hot path.
    emit({
      type: "outcome",
      subscriber: this.#options.subscriber,
      delivery,
      message,
      outcome,
      attempt: attemptOf(delivery),
      durationMs: handled ? this.#host.clock.now() - started : 0,
      handled,
      error,
    });
  }
}

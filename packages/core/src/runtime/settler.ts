import type { Delivery, SettleResult } from "../delivery.js";
import { isRustStreamError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Flow } from "./flow.js";
import type { WorkCounter } from "./workCounter.js";

/**
 * Calls settle verbs and keeps count of what the broker has not answered yet. A synchronous answer
 * is handled at once; `unsupported` runs the caller's fallback; a rejection is logged (the broker
 * keeps the message). A delivery the handler already settled is left alone.
 */
export class Settler {
  readonly #log: Logger;
  readonly #work: WorkCounter;
  readonly #flow: Flow;

  constructor(log: Logger, work: WorkCounter, flow: Flow) {
    this.#log = log;
    this.#work = work;
    this.#flow = flow;
  }

  // The common case without a closure per message: what every successful handler ends in.
  ack(delivery: Delivery): void {
    let result: SettleResult;
    try {
      result = delivery.ack();
    } catch (error) {
      if (isRustStreamError(error, "already-settled")) return;
      this.#log.error({ error }, "settling the delivery failed");
      return;
    }
    if (typeof result !== "string") this.settle(() => result, undefined);
  }

  /** Drops the delivery (a broker with a dead letter of its own applies it). */
  drop(delivery: Delivery): void {
    this.settle(() => delivery.nack({ requeue: false }), undefined);
  }

  settle(verb: () => SettleResult, otherwise: (() => void) | undefined): void {
    let result: SettleResult;
    try {
      result = verb();
    } catch (error) {
      if (isRustStreamError(error, "already-settled")) return;
      this.#log.error({ error }, "settling the delivery failed");
      return;
    }
    if (result === "ok") return;
    if (result === "unsupported") {
      otherwise?.();
      return;
    }
    this.track(
      result.then(
        (answer) => {
          if (answer === "unsupported") otherwise?.();
        },
        (error: unknown) => {
          if (!isRustStreamError(error, "already-settled")) {
            this.#log.error({ error }, "settling the delivery failed");
          }
        },
      ),
    );
  }

  /** Counts `promise` (which never rejects) as broker work in flight until it settles. */
  track(promise: Promise<void>): void {
    this.started();
    promise.then(() => this.finished());
  }

  /**
   * Counts one piece of broker work in flight; {@link finished} must follow once, whatever its
   * outcome. For a caller that already has a callback where the work ends (a reply's publish), so
   * the count costs no promise of its own.
   */
  started(): void {
    this.#flow.settling++;
    this.#work.begin();
  }

  finished(): void {
    this.#flow.settling--;
    this.#work.end();
    this.#flow.wake();
  }
}

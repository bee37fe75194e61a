import { deliveriesOf } from "../attempt.js";
import type { ClockTimer } from "../clock.js";
import { deadLetterCopyOf } from "../deadLetterCopy.js";
import type { Delivery } from "../delivery.js";
import { isRustStreamError } from "../errors.js";
import { writeRetryCount } from "../headerNames.js";
import type { Logger } from "../logger.js";
import type { OutgoingMessage } from "../message.js";
import type { DispatchHost } from "./dispatchHost.js";
import type { PublishRoute } from "./publishing.js";
import type { Settler } from "./settler.js";

interface PendingCopy {
  /** The original, unsettled until its copy is published. */
  readonly delivery: Delivery;
  readonly message: OutgoingMessage;
  /** A retry copy (then the ack), or a dead letter tried again after its publish failed. */
  readonly kind: "retry-copy" | "dead-letter";
  readonly timer: ClockTimer;
}

/** The cap and dead letter a broker-moved source applies itself, as it was declared to the broker. */
export interface BrokerMove {
  readonly cap: number;
  readonly deadLetter: string;
}

/** What the copies and dead letters of one subscriber need to know. */
export interface RedeliveryOptions {
  readonly subscriber: string;
  readonly route: PublishRoute;
  /** Where a retry copy goes so that this subscription receives it again, if anywhere. */
  readonly redeliveryAddress: string | undefined;
  /** The declared dead letter, if any. */
  readonly deadLetter: string | undefined;
  /** Where the broker applies the cap and the dead letter itself, what it applies. */
  readonly brokerMoves: BrokerMove | undefined;
  /** How long a failed dead-letter publish waits before the message comes back. */
  readonly backoffMaxMs: number;
  readonly log: Logger;
}

/**
 * The messages the runtime itself publishes for a delivery it cannot settle the simple way: retry
 * copies where the broker cannot requeue, and dead-lettered copies with their origin.
 */
export class Redelivery {
  readonly #host: DispatchHost;
  readonly #settler: Settler;
  readonly #options: RedeliveryOptions;
  readonly #pendingCopies = new Set<PendingCopy>();
  /** Set by the shutdown's flush: a copy that fails then is left to the broker, not tried again. */
  #flushed = false;

  constructor(host: DispatchHost, settler: Settler, options: RedeliveryOptions) {
    this.#host = host;
    this.#settler = settler;
    this.#options = options;
  }

  /**
   * Sends the delivery to the declared dead letter with its origin, and with its retry count raised
   * to the deliveries made, as the original framework writes it: a reader of the dead letter sees
   * how many times the message was tried, whichever language or broker tried it last.
   */
  deadLetter(delivery: Delivery, reason: string): void {
    const { brokerMoves, deadLetter: destination, log } = this.#options;
    const settler = this.#settler;
    if (brokerMoves !== undefined) {
      this.drop(delivery, reason);
      return;
    }
    if (destination === undefined) {
      log.warn({ reason }, "dead-letter asked but no deadLetter() declared; dropping the message");
      settler.drop(delivery);
      return;
    }
    this.#emitDeadLetter(delivery, destination, reason, "runtime");
    this.#publishDeadLetter(delivery, {
      name: destination,
      payload: delivery.payload,
      ...deadLetterCopyOf(delivery, reason),
      ...(delivery.partitionKey === undefined ? {} : { partitionKey: delivery.partitionKey }),
      cause: delivery,
      replacesCause: true,
    });
  }

  #publishDeadLetter(delivery: Delivery, message: OutgoingMessage): void {
    const { backoffMaxMs, log } = this.#options;
    const settler = this.#settler;
    const destination = message.name;
    const sent = this.#host.pipeline.publish(this.#options.route, message, "dead-letter").then(
      () => settler.ack(delivery),
      (error: unknown) => {
        if (isRustStreamError(error, "publish-refused")) {
          // Refused before it was sent (over the broker's size limit, a header it cannot carry):
          // no later try can succeed, and keeping it would run the handler on it for ever.
          log.error(
            { error, destination, position: String(delivery.position) },
            "the dead letter refused the message; dropping it",
          );
          settler.drop(delivery);
          return;
        }
        // Keep the message rather than lose it, and come back slowly rather than spin: the broker
        // delivers it again after the backoff, or, where it cannot delay (a stream file, Kafka),
        // the runtime holds it and tries the dead letter again then.
        log.error({ error, destination }, "the dead-letter publish failed; retrying later");
        settler.settle(
          () => delivery.nackAfter(backoffMaxMs),
          () => this.#tryAgainLater(delivery, message, "dead-letter"),
        );
      },
    );
    settler.track(sent);
  }

  /**
   * Drops the delivery: a reject, which a broker that moves failing messages itself answers by
   * moving it to its dead letter, so that is reported as a dead letter.
   */
  drop(delivery: Delivery, reason = "rejected"): void {
    const moves = this.#options.brokerMoves;
    if (moves !== undefined) this.reportBrokerMove(delivery, moves.deadLetter, reason);
    this.#settler.drop(delivery);
  }

  /** Reports a move the broker makes on the settle that follows. */
  reportBrokerMove(delivery: Delivery, destination: string, reason: string): void {
    this.#emitDeadLetter(delivery, destination, reason, "broker");
  }

  /** The one dead-letter event, whoever moves the message. */
  #emitDeadLetter(
    delivery: Delivery,
    destination: string,
    reason: string,
    movedBy: "runtime" | "broker",
  ): void {
    this.#host.emit?.({
      type: "dead-letter",
      subscriber: this.#options.subscriber,
      delivery,
      destination,
      reason,
      movedBy,
    });
  }

  // Copy first, ack after: a crash in between delivers twice, never zero times.
  copyThenAck(delivery: Delivery): void {
    const copy = this.#copyOf(delivery);
    if (copy === undefined) {
      this.#settler.drop(delivery);
      return;
    }
    this.#publishThenAck(delivery, copy);
  }

  // The original stays unsettled while the delay runs and is acked once its copy is published, as
  // copyThenAck does at once: a process that dies within the delay leaves the original with the
  // broker, which delivers it again (twice at worst, never zero times). Holding it keeps a tracked
  // position (a file's, Kafka's) from moving past it meanwhile, the price of a delay the broker
  // cannot keep.
  copyLaterThenAck(delivery: Delivery, delayMs: number): void {
    const message = this.#copyOf(delivery);
    if (message === undefined) {
      this.#settler.drop(delivery);
      return;
    }
    this.#hold(delivery, message, "retry-copy", delayMs);
  }

  #hold(
    delivery: Delivery,
    message: OutgoingMessage,
    kind: PendingCopy["kind"],
    delayMs: number,
  ): void {
    const copy: PendingCopy = {
      delivery,
      message,
      kind,
      timer: this.#host.clock.setTimer(delayMs, () => this.#sendCopy(copy)),
    };
    this.#pendingCopies.add(copy);
    this.#host.coordinator.park();
  }

  /**
   * A copy or dead letter whose publish failed (a broker down, a full disk) is held with its
   * original unsettled and published again after the backoff, so a failure that passes costs a
   * delay, not the message until the process restarts. Not after the shutdown's flush: the original
   * stays with the broker, which delivers it again to the next process.
   */
  #tryAgainLater(delivery: Delivery, message: OutgoingMessage, kind: PendingCopy["kind"]): void {
    if (this.#flushed) return;
    this.#hold(delivery, message, kind, this.#options.backoffMaxMs);
  }

  /** Publishes every copy still waiting for its delay now, so none is lost to the shutdown. */
  flush(): void {
    this.#flushed = true;
    for (const copy of this.#pendingCopies) {
      copy.timer.cancel();
      this.#sendCopy(copy);
    }
  }

  #copyOf(delivery: Delivery): OutgoingMessage | undefined {
    const address = this.#options.redeliveryAddress;
    if (address === undefined) {
      this.#options.log.error(
        { source: delivery.name },
        "the broker cannot requeue and the source has no address for a retry copy; dropping the message",
      );
      return undefined;
    }
    return {
      name: address,
      payload: delivery.payload.slice(),
      headers: writeRetryCount(delivery.headers.clone(), deliveriesOf(delivery)),
      ...(delivery.partitionKey === undefined ? {} : { partitionKey: delivery.partitionKey }),
      cause: delivery,
      replacesCause: true,
    };
  }

  #sendCopy(copy: PendingCopy): void {
    if (!this.#pendingCopies.delete(copy)) return;
    this.#host.coordinator.unpark();
    if (copy.kind === "dead-letter") this.#publishDeadLetter(copy.delivery, copy.message);
    else this.#publishThenAck(copy.delivery, copy.message);
  }

  #publishThenAck(delivery: Delivery, copy: OutgoingMessage): void {
    const sent = this.#host.pipeline.publish(this.#options.route, copy, "retry-copy").then(
      () => this.#settler.ack(delivery),
      (error: unknown) => {
        if (isRustStreamError(error, "publish-refused")) {
          // No later try can succeed; the original stays with the broker.
          this.#options.log.error(
            { error },
            "the retry copy was refused; the delivery stays unsettled",
          );
          return;
        }
        this.#options.log.error(
          { error, retryInMs: this.#options.backoffMaxMs },
          "the retry copy failed to publish; the delivery stays unsettled and the copy is tried again later",
        );
        this.#tryAgainLater(delivery, copy, "retry-copy");
      },
    );
    this.#settler.track(sent);
  }
}

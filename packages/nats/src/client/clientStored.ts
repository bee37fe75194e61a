import type { JsMsg } from "@nats-io/jetstream";
import { RustStreamError } from "@ruststream/core";
import type { HeldSettlements } from "./heldSettlements.js";
import { StoredMessage } from "./storedMessage.js";

/**
 * A message of an acknowledging consumer, whose verbs are the client's (methods, not a closure
 * each), held to the end of the event loop's turn and written with the turn's others
 * (`HeldSettlements`).
 */
export class ClientStored extends StoredMessage {
  readonly #m: JsMsg;
  readonly #held: HeldSettlements;

  constructor(m: JsMsg, held: HeldSettlements) {
    super(m);
    this.#m = m;
    this.#held = held;
  }

  ack(): void {
    this.#held.ack(this.#m);
  }

  async ackConfirmed(): Promise<void> {
    // Not held: its confirmation is awaited. What was settled before it goes out first, in order.
    this.#held.write();
    const confirmed = await this.#m.ackAck();
    if (!confirmed) {
      throw new RustStreamError(
        "broker-failure",
        `the server did not confirm the ack of ${this.stream}:${this.streamSequence}: it may be delivered again`,
      );
    }
  }

  nak(delayMs?: number): void {
    this.#held.nak(this.#m, delayMs);
  }

  term(reason: string): void {
    this.#held.term(this.#m, reason);
  }

  working(): void {
    this.#held.working(this.#m);
  }
}

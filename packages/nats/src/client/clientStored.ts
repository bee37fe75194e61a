import type { JsMsg } from "@nats-io/jetstream";
import { type ReadonlyHeaderMap, RustStreamError } from "@ruststream/core";
import type { HeldSettlements } from "./heldSettlements.js";
import type { Stored } from "./link.js";
import { readHeaders } from "./receivedHeaders.js";

/**
 * A JetStream message as the subscription reads it: one object a message, whose verbs are the
 * client's (methods, not a closure each: this is made for every message a consumer reads), held
 * to the end of the event loop's turn and written with the turn's others (`HeldSettlements`).
 */
export class ClientStored implements Stored {
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
  readonly reply = undefined;
  readonly status = undefined;
  readonly decodeError: Error | undefined;
  readonly stream: string;
  readonly consumer: string;
  readonly streamSequence: bigint;
  readonly deliveryCount: number;
  readonly #m: JsMsg;
  readonly #held: HeldSettlements;

  constructor(m: JsMsg, held: HeldSettlements) {
    const info = m.info;
    const read = readHeaders(m);
    this.#m = m;
    this.#held = held;
    this.subject = m.subject;
    this.payload = m.data;
    this.headers = read.headers;
    this.decodeError = read.unreadable;
    this.stream = info.stream;
    this.consumer = info.consumer;
    this.streamSequence = BigInt(info.streamSequence);
    this.deliveryCount = info.deliveryCount;
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

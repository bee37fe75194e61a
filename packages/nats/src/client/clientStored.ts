import type { JsMsg } from "@nats-io/jetstream";
import { type ReadonlyHeaderMap, RustStreamError } from "@ruststream/core";
import type { Stored } from "./link.js";
import { readHeaders } from "./receivedHeaders.js";

/**
 * A JetStream message as the subscription reads it: one object a message, whose verbs are the
 * client's (methods, not a closure each: this is made for every message a consumer reads).
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

  constructor(m: JsMsg) {
    const info = m.info;
    const read = readHeaders(m);
    this.#m = m;
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
    this.#m.ack();
  }

  async ackConfirmed(): Promise<void> {
    const confirmed = await this.#m.ackAck();
    if (!confirmed) {
      throw new RustStreamError(
        "broker-failure",
        `the server did not confirm the ack of ${this.stream}:${this.streamSequence}: it may be delivered again`,
      );
    }
  }

  nak(delayMs?: number): void {
    this.#m.nak(delayMs);
  }

  term(reason: string): void {
    this.#m.term(reason);
  }

  working(): void {
    this.#m.working();
  }
}

import type { JsMsg } from "@nats-io/jetstream";
import type { ReadonlyHeaderMap } from "@ruststream/core";
import type { Stored } from "./link.js";
import { readHeaders } from "./receivedHeaders.js";

/**
 * A JetStream message as the subscription reads it, read once from the client's JsMsg: one object
 * a message (this is made for every message a consumer reads). Its settle verbs are the
 * consumer's: a subclass each (`ClientStored` for an acknowledging consumer, `UnackedStored` for an
 * ordered one).
 */
export abstract class StoredMessage implements Stored {
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
  readonly storedAt: number;

  constructor(m: JsMsg) {
    const info = m.info;
    const read = readHeaders(m);
    this.subject = m.subject;
    this.payload = m.data;
    this.headers = read.headers;
    this.decodeError = read.unreadable;
    this.stream = info.stream;
    this.consumer = info.consumer;
    this.streamSequence = BigInt(info.streamSequence);
    this.deliveryCount = info.deliveryCount;
    this.storedAt = Math.floor(info.timestampNanos / 1_000_000);
  }

  abstract ack(): void;
  abstract ackConfirmed(): Promise<void>;
  abstract nak(delayMs?: number): void;
  abstract term(reason: string): void;
  abstract working(): void;
}

import type { ReadonlyHeaderMap, SettleResult } from "@ruststream/core";
import { DeliveryBase } from "@ruststream/core/broker";
import type { Stored } from "../client/link.js";
import { natsHeaderNames } from "../names.js";
import { JetStreamPosition, type JetStreamSeekPosition } from "../position.js";

/** What a JetStream delivery tells its subscription. */
export interface JetStreamDeliveryOwner {
  assertOpen(): void;
  /** The delivery was settled at the server: it needs no more working() beats. */
  settled(delivery: JetStreamDelivery): void;
  /** Whether an ack waits for the server's confirmation (the `tracked` commit mode). */
  readonly confirmAcks: boolean;
}

/** The reason a drop gives the server's `term` (it shows in the server's advisory). */
export const DROP_REASON = "dropped by a RustStream handler";

/**
 * A message a JetStream consumer delivered. Settlement is the server's: ack, `nak` (requeue),
 * `nak(delay)` (delayed requeue), `term` (drop, for good). The attempt is the server's delivery
 * count.
 */
export class JetStreamDelivery extends DeliveryBase<JetStreamSeekPosition> {
  readonly message: Stored;
  protected readonly owner: JetStreamDeliveryOwner;
  #position: JetStreamPosition | undefined;
  /** When the server last heard from this delivery (received, or a working() beat), clock ms. */
  lastBeat: number;

  constructor(owner: JetStreamDeliveryOwner, message: Stored, now: number) {
    super();
    this.owner = owner;
    this.message = message;
    this.lastBeat = now;
  }

  get name(): string {
    return this.message.subject;
  }
  get payload(): Uint8Array {
    return this.message.payload;
  }
  get headers(): ReadonlyHeaderMap {
    return this.message.headers;
  }
  /** Headers its sender wrote that could not be read: the runtime settles it by the decode policy. */
  override get decodeError(): Error | undefined {
    return this.message.decodeError;
  }
  get partitionKey(): Uint8Array | undefined {
    return this.message.headers.get(natsHeaderNames.partitionKey);
  }
  get redeliveryCount(): number {
    return this.message.deliveryCount;
  }
  /** Its stream and stream sequence (typed as what the subscription seeks to, a time too). */
  get position(): JetStreamSeekPosition {
    return this.streamPosition;
  }

  /** Its stream and stream sequence. */
  get streamPosition(): JetStreamPosition {
    this.#position ??= new JetStreamPosition(
      this.message.stream,
      this.message.streamSequence,
      this.message.consumer,
    );
    return this.#position;
  }

  protected settleAck(): SettleResult {
    this.owner.assertOpen();
    this.owner.settled(this);
    if (!this.owner.confirmAcks) {
      this.message.ack();
      return "ok";
    }
    return this.message.ackConfirmed().then(() => "ok");
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.owner.assertOpen();
    this.owner.settled(this);
    if (requeue) this.message.nak();
    else this.message.term(DROP_REASON);
    return "ok";
  }

  protected override settleNackAfter(ms: number): SettleResult {
    this.owner.assertOpen();
    this.owner.settled(this);
    this.message.nak(ms);
    return "ok";
  }
}

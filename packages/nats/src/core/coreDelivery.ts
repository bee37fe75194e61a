import type { ReadonlyHeaderMap, SettleResult } from "@ruststream/core";
import { DeliveryBase } from "@ruststream/core/broker";
import type { Received } from "../client/link.js";
import { natsHeaderNames } from "../names.js";
import { NatsArrivalPosition } from "../position.js";

/** What a core delivery tells its subscription when it is done with. */
export interface CoreDeliveryOwner {
  assertOpen(): void;
  released(delivery: CoreDelivery): void;
}

/**
 * A message from a core NATS subject. The server forgets it once sent: there is nothing to ack and
 * nothing to requeue, so every settle answers `unsupported` and the delivery stays open for the
 * caller (the runtime republishes a retry copy where it must retry; an ack or a drop is advisory).
 */
export class CoreDelivery extends DeliveryBase<NatsArrivalPosition> {
  readonly #message: Received;
  readonly #arrival: bigint;
  readonly #owner: CoreDeliveryOwner;
  #position: NatsArrivalPosition | undefined;

  constructor(owner: CoreDeliveryOwner, message: Received, arrival: bigint) {
    super();
    this.#owner = owner;
    this.#message = message;
    this.#arrival = arrival;
  }

  get name(): string {
    return this.#message.subject;
  }
  get payload(): Uint8Array {
    return this.#message.payload;
  }
  get headers(): ReadonlyHeaderMap {
    return this.#message.headers;
  }
  /** Headers its sender wrote that could not be read: the runtime settles it by the decode policy. */
  override get decodeError(): Error | undefined {
    return this.#message.decodeError;
  }
  get partitionKey(): Uint8Array | undefined {
    return this.#message.headers.get(natsHeaderNames.partitionKey);
  }
  /** Core NATS does not count deliveries: the retry count travels in the copy's header. */
  get redeliveryCount(): undefined {
    return undefined;
  }
  /** Built when first asked for: the runtime's hot path never reads it. */
  get position(): NatsArrivalPosition {
    this.#position ??= new NatsArrivalPosition(this.#arrival);
    return this.#position;
  }

  protected settleAck(): SettleResult {
    return this.#unsupported();
  }
  protected settleNack(): SettleResult {
    return this.#unsupported();
  }

  // The first settle call is where the consumer is done with it, as far as a test harness can tell.
  #unsupported(): SettleResult {
    this.#owner.assertOpen();
    this.#owner.released(this);
    return "unsupported";
  }
}

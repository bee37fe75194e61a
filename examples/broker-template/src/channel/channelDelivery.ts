import type { ReadonlyHeaderMap, SettleResult } from "@ruststream/core";
import { DeliveryBase } from "@ruststream/core/broker";
import { channelHeaderNames } from "../names.js";
import type { ChannelPosition } from "../position.js";
import type { Frame } from "../wire/link.js";

/** What a delivery tells its subscription when it is done with. */
export interface DeliveryOwner {
  assertOpen(): void;
  released(delivery: ChannelDelivery): void;
}

/**
 * A delivery from a channel. Nothing is acknowledged on this wire, so every verb answers
 * `unsupported`, honestly, and leaves the delivery open (the runtime then acks by republishing a
 * retry copy where it must retry). For a test's coordinator the first settle call is the end of it.
 */
export class ChannelDelivery extends DeliveryBase<ChannelPosition> {
  readonly position: ChannelPosition;
  readonly redeliveryCount = undefined;
  readonly #frame: Frame;
  readonly #owner: DeliveryOwner;

  constructor(owner: DeliveryOwner, frame: Frame, position: ChannelPosition) {
    super();
    this.#owner = owner;
    this.#frame = frame;
    this.position = position;
  }

  get name(): string {
    return this.#frame.channel;
  }
  get payload(): Uint8Array {
    return this.#frame.payload;
  }
  get headers(): ReadonlyHeaderMap {
    return this.#frame.headers;
  }
  get partitionKey(): Uint8Array | undefined {
    return this.#frame.headers.get(channelHeaderNames.partitionKey);
  }

  protected settleAck(): SettleResult {
    return this.#unsupported();
  }
  protected settleNack(): SettleResult {
    return this.#unsupported();
  }

  #unsupported(): SettleResult {
    this.#owner.assertOpen();
    this.#owner.released(this);
    return "unsupported";
  }
}

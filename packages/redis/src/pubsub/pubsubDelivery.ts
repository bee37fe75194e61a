import { HeaderMap, type ReadonlyHeaderMap, type SettleResult } from "@ruststream/core";
import { DeliveryBase } from "@ruststream/core/broker";
import { bareFramePayload, decodeFrame } from "../client/frame.js";
import type { RedisBytes } from "../client/resp.js";
import { redisHeaders } from "../names.js";
import { RedisSequencePosition } from "../position.js";

/**
 * A message from a Pub/Sub channel. Redis forgets it once sent: there is nothing to ack and nothing
 * to requeue, so every settle answers `unsupported` and the delivery stays open for the caller.
 */
export class RedisPubSubDelivery extends DeliveryBase<RedisSequencePosition> {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers: HeaderMap;
  readonly #sequence: number;
  #position: RedisSequencePosition | undefined;
  readonly #release: () => void;
  #released = false;

  /**
   * `frame` is the message as published; `release` is shared by every delivery of a subscription
   * (no closure per message).
   */
  constructor(name: string, frame: RedisBytes, sequence: number, release: () => void) {
    super();
    this.name = name;
    const bare = bareFramePayload(frame);
    if (bare === undefined) {
      const framed = decodeFrame(frame);
      this.payload = framed.payload;
      this.headers = framed.headers;
    } else {
      this.payload = bare;
      this.headers = new HeaderMap();
    }
    this.#sequence = sequence;
    this.#release = release;
  }

  /** Redis does not count Pub/Sub deliveries. */
  get redeliveryCount(): undefined {
    return undefined;
  }

  /** Built when first asked for: the runtime's hot path never reads it. */
  get position(): RedisSequencePosition {
    this.#position ??= new RedisSequencePosition(BigInt(this.#sequence));
    return this.#position;
  }

  get partitionKey(): Uint8Array | undefined {
    return (this.headers as ReadonlyHeaderMap).get(redisHeaders.partitionKey);
  }

  protected settleAck(): SettleResult {
    return this.#unsupported();
  }

  protected settleNack(_requeue: boolean): SettleResult {
    return this.#unsupported();
  }

  // The first settle call is where the consumer is done with it, as far as a test harness can tell.
  #unsupported(): SettleResult {
    if (!this.#released) {
      this.#released = true;
      this.#release();
    }
    return "unsupported";
  }
}

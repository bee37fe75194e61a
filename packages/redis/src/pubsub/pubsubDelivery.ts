import {
  DeliveryBase,
  type HeaderMap,
  type ReadonlyHeaderMap,
  type SettleResult,
} from "@ruststream/core";
import type { Framed } from "../frame.js";
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
  /** Redis does not count Pub/Sub deliveries. */
  readonly redeliveryCount = undefined;
  readonly #sequence: number;
  #position: RedisSequencePosition | undefined;
  readonly #release: () => void;
  #released = false;

  /** `release` is shared by every delivery of a subscription (no closure per message). */
  constructor(name: string, framed: Framed, sequence: number, release: () => void) {
    super();
    this.name = name;
    this.payload = framed.payload;
    this.headers = framed.headers;
    this.#sequence = sequence;
    this.#release = release;
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

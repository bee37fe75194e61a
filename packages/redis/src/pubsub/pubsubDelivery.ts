import {
  DeliveryBase,
  type HeaderMap,
  type ReadonlyHeaderMap,
  type SettleResult,
} from "@ruststream/core";
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
  readonly position: RedisSequencePosition;
  readonly #release: () => void;
  #released = false;

  constructor(
    name: string,
    framed: { headers: HeaderMap; payload: Uint8Array },
    sequence: bigint,
    release: () => void,
  ) {
    super();
    this.name = name;
    this.payload = framed.payload;
    this.headers = framed.headers;
    this.position = new RedisSequencePosition(sequence);
    this.#release = release;
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

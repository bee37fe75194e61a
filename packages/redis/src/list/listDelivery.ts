import type { HeaderMap, ReadonlyHeaderMap, SettleResult } from "@ruststream/core";
import { DeliveryBase } from "@ruststream/core/broker";
import type { Link } from "../client/link.js";
import type { Command, RedisBytes, Reply } from "../client/resp.js";
import { redisHeaders } from "../names.js";
import { RedisSequencePosition } from "../position.js";

/** What a list delivery needs from the subscription that handed it out. */
export interface ListDeliveryOwner {
  assertOpen(): void;
  /** Removes the value from the processing list (ack and drop). */
  remove(delivery: RedisListDelivery): Promise<void>;
  /** Pushes a copy (retry count raised) back onto the queue and removes the value, atomically. */
  requeue(delivery: RedisListDelivery): Promise<void>;
  /**
   * Runs `copy` and releases the value in one step, while it is still held, when `link` is the
   * connection the value was taken on (its reply, or nil when the value was no longer held);
   * `undefined` otherwise.
   */
  forward(delivery: RedisListDelivery, copy: Command, link: Link): Promise<Reply> | undefined;
  settled(delivery: RedisListDelivery): void;
}

/**
 * A delivery from a reliable list: the value sits in the processing list until it is settled.
 * Redis keeps no delivery count for lists, so every value counts as delivered once
 * (`redeliveryCount` 1) and whatever puts one back (requeue, shutdown, recovery of a dead
 * consumer's values) raises its retry-count header instead: the attempt is that header plus one.
 */
export class RedisListDelivery extends DeliveryBase<RedisSequencePosition> {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers: HeaderMap;
  readonly redeliveryCount = 1;
  readonly position: RedisSequencePosition;
  /** The value exactly as it sits in the processing list (`LREM` needs it byte for byte). */
  readonly raw: RedisBytes;
  /** The claim's member in the recovery set, when recovery is on. */
  readonly claim: RedisBytes | undefined;
  readonly #owner: ListDeliveryOwner;
  /** Set once a copy took its place (see forwardWith): the ack that follows has nothing to remove. */
  #forwarded = false;

  constructor(
    owner: ListDeliveryOwner,
    name: string,
    raw: RedisBytes,
    framed: { headers: HeaderMap; payload: Uint8Array },
    sequence: bigint,
    claim: RedisBytes | undefined,
  ) {
    super();
    this.#owner = owner;
    this.name = name;
    this.raw = raw;
    this.claim = claim;
    this.payload = framed.payload;
    this.headers = framed.headers;
    this.position = new RedisSequencePosition(sequence);
  }

  get partitionKey(): Uint8Array | undefined {
    return (this.headers as ReadonlyHeaderMap).get(redisHeaders.partitionKey);
  }

  protected settleAck(): SettleResult {
    this.#owner.assertOpen();
    // Removed with its copy's write; removing by value again could take an equal value another
    // delivery holds, and a value that was no longer held is its new holder's to settle.
    if (this.#forwarded) return this.#finish(Promise.resolve());
    return this.#finish(this.#owner.remove(this));
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.#owner.assertOpen();
    return this.#finish(requeue ? this.#owner.requeue(this) : this.#owner.remove(this));
  }

  /**
   * Sends `copy`, a message published on this delivery's behalf on `link` (the runtime's dead letter
   * of it), and releases this value in the same step, so a kill or a cut reply between the publish
   * and the ack cannot leave the value to be recovered and dead-lettered again. Answers the copy's
   * reply, nil when the value was no longer held (nothing written), or `undefined` when `link` is
   * another connection's, which then sends the copy itself.
   */
  forwardWith(link: Link, copy: Command): Promise<Reply> | undefined {
    const moved = this.#owner.forward(this, copy, link);
    return moved?.then((reply) => {
      this.#forwarded = true;
      return reply;
    });
  }

  #finish(work: Promise<void>): Promise<"ok"> {
    return work.then(() => {
      this.#owner.settled(this);
      return "ok" as const;
    });
  }
}

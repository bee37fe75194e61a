import type { HeaderMap, ReadonlyHeaderMap, SettleResult } from "@ruststream/core";
import {
  attemptOf,
  DeliveryBase,
  deliveriesOf,
  writeDeadLetterOrigin,
  writeDeadLetterRetryCount,
} from "@ruststream/core/broker";
import type { Link } from "../client/link.js";
import type { Command, Reply } from "../client/resp.js";
import { countedHeaders, redisHeaders } from "../names.js";
import { RedisStreamPosition } from "../position.js";
import type { StreamEntry } from "./entry.js";

/** What a stream delivery needs from the subscription that handed it out. */
export interface StreamDeliveryOwner {
  assertOpen(): void;
  /** `XACK` of the entry. */
  acknowledge(id: string): Promise<void>;
  /** Appends a copy with `headers` and acks the original, in one step. */
  requeue(id: string, headers: ReadonlyHeaderMap, payload: Uint8Array): Promise<void>;
  /** Parks a copy in the delayed-retry set and acks the original; `false` without the set. */
  delay(
    id: string,
    headers: ReadonlyHeaderMap,
    payload: Uint8Array,
    ms: number,
  ): Promise<boolean> | false;
  /** Appends the message to `target` and acks the original, in one step. */
  deadLetter(id: string, target: string, headers: HeaderMap, payload: Uint8Array): Promise<void>;
  /**
   * Runs `copy` and acks the original in one step when `link` is the connection the entry was read
   * on (its reply, or nil when the entry was no longer this consumer's); `undefined` otherwise.
   */
  forward(id: string, copy: Command, link: Link): Promise<Reply> | undefined;
  readonly maxAttempts: number | undefined;
  readonly deadLetterTarget: string | undefined;
  settled(delivery: RedisStreamDelivery): void;
}

/**
 * A delivery from a stream's consumer group. `redeliveryCount` is the pending list's delivery count
 * of this entry alone (1 off the tail, more once reclaimed); a copy that goes back (requeue, delayed
 * retry) carries the deliveries before it in the retry-count header. The attempt, as the runtime
 * reads it, is the sum of the two, so requeued copies and reclaimed entries count alike.
 */
export class RedisStreamDelivery extends DeliveryBase<RedisStreamPosition> {
  readonly name: string;
  readonly entry: StreamEntry;
  /** How many times the server handed this entry out (1 off the tail; more once reclaimed). */
  readonly deliveryCount: number;
  readonly redeliveryCount: number;
  readonly #owner: StreamDeliveryOwner;
  /** Set once a copy took its place (see forwardWith): the ack that follows has nothing to do. */
  #forwarded = false;

  constructor(owner: StreamDeliveryOwner, name: string, entry: StreamEntry, deliveryCount: number) {
    super();
    this.#owner = owner;
    this.name = name;
    this.entry = entry;
    this.deliveryCount = deliveryCount;
    this.redeliveryCount = deliveryCount;
  }

  /** The attempt at this stream, as the runtime counts it: what a cap is checked against. */
  get attempt(): number {
    return attemptOf(this);
  }

  get payload(): Uint8Array {
    return this.entry.payload;
  }
  override get decodeError(): Error | undefined {
    return this.entry.unreadable;
  }
  get headers(): ReadonlyHeaderMap {
    return this.entry.headers;
  }
  get partitionKey(): Uint8Array | undefined {
    return this.entry.headers.get(redisHeaders.partitionKey);
  }
  get position(): RedisStreamPosition {
    return RedisStreamPosition.parse(this.entry.id);
  }
  /** The entry id, as Redis writes it. */
  get id(): string {
    return this.entry.id;
  }

  protected settleAck(): SettleResult {
    this.#owner.assertOpen();
    // Acked with its copy's write; and an entry that was no longer ours is its new holder's to
    // settle: an XACK now would ack it under that holder, whose own dead letter would then write
    // nothing (its entry no longer pending), losing the message between the retry and the dead letter.
    if (this.#forwarded) return this.#finish(Promise.resolve());
    return this.#finish(this.#owner.acknowledge(this.entry.id));
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.#owner.assertOpen();
    const target = this.#owner.deadLetterTarget;
    if (target !== undefined) {
      const exhausted = this.attempt >= (this.#owner.maxAttempts ?? 1);
      if (!requeue || exhausted) {
        return this.#finish(this.moveTo(target, requeue ? "max-attempts" : "rejected"));
      }
    }
    if (!requeue) return this.#finish(this.#owner.acknowledge(this.entry.id));
    return this.#finish(this.#owner.requeue(this.entry.id, this.#copyHeaders(), this.payload));
  }

  protected override settleNackAfter(ms: number): SettleResult {
    this.#owner.assertOpen();
    const parked = this.#owner.delay(this.entry.id, this.#copyHeaders(), this.payload, ms);
    if (parked === false) return "unsupported";
    return this.#finish(parked.then(() => undefined));
  }

  /** Sends the entry to `target` with where it came from, why, and its counts. Used by reclaim too. */
  moveTo(target: string, reason: string): Promise<void> {
    const headers = this.entry.headers.clone();
    writeDeadLetterOrigin(headers, { source: this.name, position: this.entry.id, reason });
    headers.set(redisHeaders.deadLetterReason, reason);
    // Every delivery the message had, in the retry count as RustStream's dead letters write it (and
    // again as the count it was moved with); and this entry's own deliveries, as its reclaim reports.
    writeDeadLetterRetryCount(headers, deliveriesOf(this));
    headers.set(redisHeaders.deliveryCount, String(this.deliveryCount));
    return this.#owner.deadLetter(this.entry.id, target, headers, this.entry.payload);
  }

  /**
   * Sends `copy`, a message published on this delivery's behalf on `link` (the runtime's dead letter
   * of it), and acks this entry in the same step, so a kill or a cut reply between the publish and
   * the ack cannot leave the entry pending to be dead-lettered again. Answers the copy's reply, nil
   * when another consumer holds the entry now (nothing written), or `undefined` when `link` is
   * another connection's, which then sends the copy itself.
   */
  forwardWith(link: Link, copy: Command): Promise<Reply> | undefined {
    const moved = this.#owner.forward(this.entry.id, copy, link);
    return moved?.then((reply) => {
      this.#forwarded = true;
      return reply;
    });
  }

  // The copy carries this entry's deliveries in its header, so its next delivery counts one more.
  #copyHeaders(): ReadonlyHeaderMap {
    return countedHeaders(this.entry.headers, this.deliveryCount);
  }

  #finish(work: Promise<void>): Promise<"ok"> {
    return work.then(() => {
      this.#owner.settled(this);
      return "ok" as const;
    });
  }
}

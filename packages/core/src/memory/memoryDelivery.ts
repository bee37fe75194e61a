import { deliveriesOf } from "../attempt.js";
import { writeDeadLetterOrigin } from "../deadLetter.js";
import { DeliveryBase, type SettleResult } from "../delivery.js";
import type { ReadonlyHeaderMap } from "../headerMap.js";
import { writeDeadLetterRetryCount } from "../headerNames.js";
import { hashKey } from "../keyHash.js";
import type { RawMessage } from "../message.js";
import type { RetryDeclaration } from "../source.js";
import { MemoryPosition } from "./memoryPosition.js";
import type { MemoryGroup, StoredMessage } from "./memoryStore.js";

/** What a delivery needs from the subscription that handed it out. */
export interface DeliveryOwner {
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
  settled(delivery: MemoryDelivery): void;
  /** Records a message the broker moved (a dead letter), as `published()` lists what it took. */
  record(message: RawMessage): void;
  /** The broker-moved retry declared on the subscription's descriptor. */
  readonly retry: RetryDeclaration | undefined;
  /** The partitions its descriptor stands in for, if any. */
  readonly partitionCount: number | undefined;
}

/** A delivery from a memory topic. Every settle answers synchronously. */
export class MemoryDelivery extends DeliveryBase<MemoryPosition> {
  readonly #owner: DeliveryOwner;
  readonly #group: MemoryGroup;
  readonly #message: StoredMessage;
  readonly #generation: number;
  readonly redeliveryCount: number;

  constructor(owner: DeliveryOwner, group: MemoryGroup, message: StoredMessage) {
    super();
    this.#owner = owner;
    this.#group = group;
    this.#message = message;
    this.#generation = group.generation;
    this.redeliveryCount = group.attempts(message.sequence);
  }

  /** The topic's stand-in partition, where its descriptor gave a `partitionCount`. */
  override get partition(): number | undefined {
    const count = this.#owner.partitionCount;
    if (count === undefined) return undefined;
    const key = this.#message.partitionKey;
    return key === undefined
      ? Number(this.#message.sequence % BigInt(count))
      : hashKey(key) % count;
  }

  get name(): string {
    return this.#message.name;
  }
  get payload(): Uint8Array {
    return this.#message.payload;
  }
  get headers(): ReadonlyHeaderMap {
    return this.#message.headers;
  }
  get partitionKey(): Uint8Array | undefined {
    return this.#message.partitionKey;
  }
  get position(): MemoryPosition {
    return new MemoryPosition(this.#message.sequence);
  }
  get sequence(): bigint {
    return this.#message.sequence;
  }

  protected settleAck(): SettleResult {
    this.#owner.assertOpen();
    this.#group.done(this.#message.sequence, this.#generation);
    this.#owner.settled(this);
    return "ok";
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.#owner.assertOpen();
    const retry = this.#owner.retry;
    if (retry?.deadLetter !== undefined) {
      const exhausted = this.redeliveryCount >= (retry.maxAttempts ?? 1);
      if (!requeue || exhausted) {
        this.#deadLetter(retry.deadLetter, requeue ? "max-attempts" : "rejected");
        return "ok";
      }
    }
    if (requeue) this.#group.requeue(this.#message.sequence, this.#generation);
    else this.#group.done(this.#message.sequence, this.#generation);
    this.#owner.settled(this);
    return "ok";
  }

  protected override settleNackAfter(ms: number): SettleResult {
    this.#owner.assertOpen();
    // A delayed retry is a nack too: at the declared cap the message moves instead of coming back.
    const retry = this.#owner.retry;
    if (retry?.deadLetter !== undefined && this.redeliveryCount >= (retry.maxAttempts ?? 1)) {
      this.#deadLetter(retry.deadLetter, "max-attempts");
      return "ok";
    }
    this.#group.requeueAfter(this.#message.sequence, this.#generation, ms);
    this.#owner.settled(this);
    return "ok";
  }

  // The broker moves the message: the dead letter gets it with where it came from and every
  // delivery it had in its retry count, as the runtime's own dead letters count them.
  #deadLetter(target: string, reason: string): void {
    const message = this.#message;
    const headers = writeDeadLetterRetryCount(message.headers.clone(), deliveriesOf(this));
    writeDeadLetterOrigin(headers, {
      source: message.name,
      position: message.sequence.toString(),
      reason,
    });
    const store = this.#group.topic.store;
    if (this.#generation === this.#group.generation) {
      const moved = {
        name: target,
        payload: message.payload,
        headers,
        partitionKey: message.partitionKey,
      };
      this.#owner.record(moved);
      store.append(moved);
    }
    this.#group.done(message.sequence, this.#generation);
    this.#owner.settled(this);
  }
}

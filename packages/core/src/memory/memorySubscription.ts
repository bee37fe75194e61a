import type { HostedSubscription, SubscriptionHost } from "../broker/hostedSubscription.js";
import {
  assertBatchSize,
  type BatchSubscription,
  type SeekableSubscription,
} from "../capabilities.js";
import { RustStreamError } from "../errors.js";
import { batchesMark, seekMark } from "../marks.js";
import type { RawMessage } from "../message.js";
import type { RetryDeclaration } from "../source.js";
import { subscriptionIterator } from "../subscription.js";
import { type DeliveryOwner, MemoryDelivery } from "./memoryDelivery.js";
import { isMemoryPosition, MemoryPosition } from "./memoryPosition.js";
import type { GroupWaiter, MemoryGroup } from "./memoryStore.js";

/** What a subscription needs from its connection, beside core's. */
export interface MemoryHost extends SubscriptionHost {
  /** Keeps a copy of a message the broker moved, where the connection records for `published()`. */
  record(message: RawMessage): void;
}

const done: IteratorResult<MemoryDelivery, undefined> = { done: true, value: undefined };

/**
 * A subscription to a memory topic. `next()` answers at once when a message is waiting; a batch
 * is the first message plus those already waiting.
 */
export class MemorySubscription
  implements
    BatchSubscription<MemoryDelivery>,
    SeekableSubscription<MemoryDelivery>,
    DeliveryOwner,
    GroupWaiter,
    HostedSubscription
{
  readonly [batchesMark] = true as const;
  readonly [seekMark] = true as const;
  readonly name: string;
  readonly group: string | undefined;
  readonly retry: RetryDeclaration | undefined;
  readonly partitionCount: number | undefined;
  readonly #host: MemoryHost;
  readonly #group: MemoryGroup;
  /** Handed out and not yet settled: returned to the group if the connection shuts down first. */
  readonly #out = new Set<MemoryDelivery>();
  #closed = false;
  #waiting:
    | { resolve: (sequence: bigint | undefined) => void; reject: (error: Error) => void }
    | undefined;

  constructor(
    host: MemoryHost,
    group: MemoryGroup,
    retry: RetryDeclaration | undefined,
    partitionCount?: number,
  ) {
    this.#host = host;
    this.#group = group;
    this.name = group.topic.name;
    this.group = group.anonymous ? undefined : group.key;
    this.retry = retry;
    this.partitionCount = partitionCount;
    group.join();
  }

  async next(): Promise<IteratorResult<MemoryDelivery, undefined>> {
    const sequence = await this.#nextSequence();
    return sequence === undefined ? done : { done: false, value: this.#deliver(sequence) };
  }

  async nextBatch(max: number): Promise<readonly MemoryDelivery[]> {
    assertBatchSize(max);
    const first = await this.#nextSequence();
    if (first === undefined) return [];
    const batch = [this.#deliver(first)];
    while (batch.length < max) {
      const sequence = this.#group.take();
      if (sequence === undefined) break;
      batch.push(this.#deliver(sequence));
    }
    return batch;
  }

  async seek(position: MemoryPosition): Promise<void> {
    this.#host.assertOpen();
    if (!isMemoryPosition(position)) {
      throw new RustStreamError(
        "foreign-value",
        "seek() got a position that is not a memory position: pass delivery.position or parsePosition()",
      );
    }
    const topic = this.#group.topic;
    if (position.sequence < topic.base || position.sequence > topic.next) {
      throw new RustStreamError(
        "unknown-position",
        `position ${position} of "${this.name}" is not retained (retained: ${topic.base} to ` +
          `${topic.next}); raise the broker's retain option to seek further back`,
      );
    }
    // Deliveries out with this subscription belong to the old generation now.
    this.#out.clear();
    this.#group.seek(position.sequence);
  }

  parsePosition(text: string): MemoryPosition {
    return MemoryPosition.parse(text);
  }

  async close(): Promise<void> {
    this.#closeNow();
  }

  [Symbol.asyncIterator](): AsyncIterator<MemoryDelivery, undefined> {
    return subscriptionIterator(this);
  }

  // HostedSubscription. Its own next() rather than PullSubscription's: a message already waiting
  // must reach the runtime in as few microtasks as before, since an app's whenIdle() right after a
  // publish on the memory broker counts on seeing it in flight.

  /** A waiting pull rejects with `error`; no pull waits after it. */
  revoke(error: RustStreamError): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    this.#group.unwait(this);
    waiting?.reject(error);
  }

  /** What was handed out and never settled goes back to the group. Answers how many went back. */
  async surrender(): Promise<number> {
    const returned = this.#out.size;
    for (const delivery of this.#out) {
      this.#group.requeue(delivery.sequence, this.#group.generation);
    }
    this.#out.clear();
    this.#closeNow();
    return returned;
  }

  #closeNow(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#group.unwait(this);
    this.#group.leave();
    // What was handed out stays valid after a close (an app's stop closes, then drains): the
    // connection keeps the subscription until the last of it settles, so a shutdown before then
    // gives it back to the group instead of losing it.
    if (this.#out.size === 0) this.#host.forget(this);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.resolve(undefined);
  }

  // DeliveryOwner
  assertOpen(): void {
    this.#host.assertOpen();
  }
  settled(delivery: MemoryDelivery): void {
    this.#out.delete(delivery);
    if (this.#closed && this.#out.size === 0) this.#host.forget(this);
  }
  record(message: RawMessage): void {
    this.#host.record(message);
  }

  // GroupWaiter
  wake(sequence: bigint): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting === undefined) this.#group.requeue(sequence, this.#group.generation);
    else waiting.resolve(sequence);
  }

  #nextSequence(): Promise<bigint | undefined> | bigint | undefined {
    this.#host.assertOpen();
    if (this.#closed) return undefined;
    if (this.#waiting !== undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `a second next() on "${this.name}" while one is waiting: pull one at a time, or open another subscription to consume in parallel`,
      );
    }
    const sequence = this.#group.take();
    if (sequence !== undefined) return sequence;
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#group.wait(this);
    });
  }

  #deliver(sequence: bigint): MemoryDelivery {
    const message = this.#group.topic.get(sequence)!;
    const delivery = new MemoryDelivery(this, this.#group, message);
    this.#out.add(delivery);
    return delivery;
  }
}

import type { HostedSubscription, SubscriptionHost } from "../broker/hostedSubscription.js";
import { PullSubscription } from "../broker/pullSubscription.js";
import type { SeekableSubscription } from "../capabilities.js";
import { RustStreamError } from "../errors.js";
import { seekMark } from "../marks.js";
import type { RetryDeclaration } from "../source.js";
import { type DeliveryOwner, MemoryDelivery } from "./memoryDelivery.js";
import { isMemoryPosition, MemoryPosition } from "./memoryPosition.js";
import type { GroupWaiter, MemoryGroup } from "./memoryStore.js";

/** What a subscription needs from its connection, beside core's. */
export interface MemoryHost extends SubscriptionHost {
  forget(subscription: MemorySubscription): void;
}

/**
 * A subscription to a memory topic. `next()` answers at once when a message is waiting; a batch
 * is the first message plus those already waiting.
 */
export class MemorySubscription
  extends PullSubscription<MemoryDelivery>
  implements SeekableSubscription<MemoryDelivery>, DeliveryOwner, GroupWaiter, HostedSubscription
{
  readonly [seekMark] = true as const;
  readonly name: string;
  readonly group: string | undefined;
  readonly retry: RetryDeclaration | undefined;
  readonly partitionCount: number | undefined;
  readonly #host: MemoryHost;
  readonly #group: MemoryGroup;
  /** Handed out and not yet settled: returned to the group if the connection shuts down first. */
  readonly #out = new Set<MemoryDelivery>();
  /** Left its group (closed, or surrendered at shutdown): once only. */
  #left = false;
  #waiting:
    | { resolve: (sequence: bigint | undefined) => void; reject: (error: Error) => void }
    | undefined;

  constructor(
    host: MemoryHost,
    group: MemoryGroup,
    retry: RetryDeclaration | undefined,
    partitionCount?: number,
  ) {
    super();
    this.#host = host;
    this.#group = group;
    this.name = group.topic.name;
    this.group = group.anonymous ? undefined : group.key;
    this.retry = retry;
    this.partitionCount = partitionCount;
    group.join();
  }

  protected async pull(max: number): Promise<readonly MemoryDelivery[]> {
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
    this.seekTo(position, isMemoryPosition, "a memory position");
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

  // HostedSubscription

  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    this.#group.unwait(this);
    waiting?.reject(error);
  }

  /** What was handed out and never settled goes back to the group. */
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
    if (this.#left) return;
    this.#left = true;
    this.markClosed();
    this.#group.unwait(this);
    this.#group.leave();
    this.#host.forget(this);
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
  }

  // GroupWaiter
  wake(sequence: bigint): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting === undefined) this.#group.requeue(sequence, this.#group.generation);
    else waiting.resolve(sequence);
  }

  #nextSequence(): Promise<bigint | undefined> | bigint | undefined {
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

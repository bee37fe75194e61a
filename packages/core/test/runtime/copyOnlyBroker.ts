// A memory broker that cannot requeue (nack with requeue, nackAfter answer "unsupported"), as many
// log brokers cannot: the runtime must then republish copies carrying the retry-count header.

import {
  type Backlog,
  batchesMark,
  brokerMark,
  DeliveryBase,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  policyMark,
  type TestableBroker,
  testableMark,
} from "../../src/brokerEntry.js";
import {
  type BatchSubscription,
  type ClosedMemoryBroker,
  type ConnectedBroker,
  type ConnectedMemoryBroker,
  type Delivery,
  MemoryBroker,
  type MemoryDelivery,
  type MemoryPosition,
  MemoryPublisher,
  type MemorySource,
  type MemorySubscription,
  type OutgoingMessage,
  type PublishPolicy,
  type RawMessage,
  type ReadonlyHeaderMap,
  RustStreamError,
  type SettleResult,
} from "../../src/index.js";

/** While `refusing`, every publish fails as a broker that is down (or a full disk) fails it. */
export interface PublishFault {
  refusing: boolean;
}

class RefusingPublisher extends MemoryPublisher {
  readonly #fault: PublishFault;
  constructor(host: ConstructorParameters<typeof MemoryPublisher>[0], fault: PublishFault) {
    super(host);
    this.#fault = fault;
  }
  override async publish(message: OutgoingMessage): ReturnType<MemoryPublisher["publish"]> {
    if (this.#fault.refusing) {
      throw new RustStreamError("broker-failure", "no space left on device (a test's fault)");
    }
    return super.publish(message);
  }
}

/** A message carrying this header reads, on this broker, as one it could not read (the reason). */
export const unreadableHeader = "x-test-unreadable";
/**
 * A message carrying this header is taken back by this broker right before its handler would run
 * (`Delivery.handOver` answers `false`, the message dropped by the broker itself), as a queue gives
 * back a row held behind a failed row of its key.
 */
export const takenBackHeader = "x-test-taken-back";
/**
 * A message carrying this header is handed over by this broker after a wait of its own
 * (`Delivery.handOver` resolves `true`), as a queue hands over a row once the rows before it of its
 * key are settled.
 */
export const handedOverHeader = "x-test-handed-over";

/** Each `handOver` the runtime asked, in order: the payload asked for, and the batch it was told. */
export type HandOversAsked = Array<{
  readonly payload: string;
  readonly batch: readonly string[] | undefined;
}>;

const text = (payload: Uint8Array) => new TextDecoder().decode(payload);

class CopyOnlyDelivery extends DeliveryBase<MemoryPosition> {
  constructor(
    readonly inner: MemoryDelivery,
    readonly asked: HandOversAsked | undefined,
  ) {
    super();
  }
  get name(): string {
    return this.inner.name;
  }
  get payload(): Uint8Array {
    return this.inner.payload;
  }
  get headers(): ReadonlyHeaderMap {
    return this.inner.headers;
  }
  get partitionKey(): Uint8Array | undefined {
    return this.inner.partitionKey;
  }
  // Like a log broker: no delivery count of its own.
  get redeliveryCount(): number | undefined {
    return undefined;
  }
  get position(): MemoryPosition {
    return this.inner.position;
  }
  // Stands in for an entry the broker could not read (no payload field): marked by a header.
  override get decodeError(): Error | undefined {
    const why = this.inner.headers.getString(unreadableHeader);
    return why === undefined ? undefined : new RustStreamError("invalid-argument", why);
  }
  handOver(batch?: readonly Delivery[]): Promise<boolean> | undefined {
    this.asked?.push({ payload: text(this.payload), batch: batch?.map((d) => text(d.payload)) });
    if (this.inner.headers.getString(handedOverHeader) !== undefined) {
      return new Promise((resolve) => setImmediate(() => resolve(true)));
    }
    if (this.inner.headers.getString(takenBackHeader) === undefined) return undefined;
    return Promise.resolve(this.inner.nack({ requeue: false })).then(() => false);
  }
  protected settleAck(): SettleResult {
    return this.inner.ack();
  }
  protected settleNack(requeue: boolean): SettleResult {
    return requeue ? "unsupported" : this.inner.nack({ requeue: false });
  }
}

class CopyOnlySubscription implements BatchSubscription<CopyOnlyDelivery> {
  readonly [batchesMark] = true as const;
  constructor(
    readonly inner: MemorySubscription,
    readonly asked: HandOversAsked | undefined,
  ) {}
  get name(): string {
    return this.inner.name;
  }
  async next(): Promise<IteratorResult<CopyOnlyDelivery, undefined>> {
    const r = await this.inner.next();
    return r.done ? r : { done: false, value: new CopyOnlyDelivery(r.value, this.asked) };
  }
  async nextBatch(max: number): Promise<readonly CopyOnlyDelivery[]> {
    return (await this.inner.nextBatch(max)).map((d) => new CopyOnlyDelivery(d, this.asked));
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  [Symbol.asyncIterator](): AsyncIterator<CopyOnlyDelivery, undefined> {
    return { next: () => this.next() };
  }
}

class ConnectedCopyOnly
  implements
    ConnectedBroker<MemorySource, CopyOnlyDelivery, MemoryPublisher, ClosedMemoryBroker>,
    TestableBroker
{
  readonly [brokerMark] = "memory";
  readonly [testableMark] = true as const;
  constructor(
    readonly inner: ConnectedMemoryBroker,
    readonly fault: PublishFault | undefined,
    readonly asked: HandOversAsked | undefined,
  ) {}
  get state() {
    return this.inner.state;
  }
  get backlog(): Backlog {
    return this.inner.backlog;
  }
  source(name: string): MemorySource {
    return this.inner.source(name);
  }
  async subscribe(source: string | MemorySource): Promise<CopyOnlySubscription> {
    return new CopyOnlySubscription(await this.inner.subscribe(source), this.asked);
  }
  defaultPublishPolicy(): PublishPolicy<this, MemoryPublisher> {
    const fault = this.fault;
    return {
      [policyMark]: "memory",
      pair: async () =>
        fault === undefined ? this.inner.pairPublisher() : new RefusingPublisher(this.inner, fault),
    };
  }
  shutdown(): Promise<ClosedMemoryBroker> {
    return this.inner.shutdown();
  }
  inject(message: OutgoingMessage): void {
    this.inner.inject(message);
  }
  published(name: string): readonly RawMessage[] {
    return this.inner.published(name);
  }
}

export class CopyOnlyBroker implements InProcessBroker<ConnectedCopyOnly> {
  readonly [brokerMark] = "memory";
  readonly [inProcessMark] = true as const;
  readonly #inner = new MemoryBroker();
  readonly #fault: PublishFault | undefined;
  readonly #asked: HandOversAsked | undefined;
  /**
   * `fault`: publishes fail while it says so (the runtime's copies and dead letters included).
   * `asked`: where each `handOver` the runtime asks is recorded.
   */
  constructor(fault?: PublishFault, asked?: HandOversAsked) {
    this.#fault = fault;
    this.#asked = asked;
  }
  async connect(): Promise<ConnectedCopyOnly> {
    return new ConnectedCopyOnly(await this.#inner.connect(), this.#fault, this.#asked);
  }
  async connectInProcess(options: InProcessOptions): Promise<ConnectedCopyOnly> {
    return new ConnectedCopyOnly(
      await this.#inner.connectInProcess(options),
      this.#fault,
      this.#asked,
    );
  }
}

import {
  HeaderMap,
  type RawMessage,
  type ReadonlyHeaderMap,
  type SettleResult,
} from "@ruststream/core";
import { DeliveryBase } from "@ruststream/core/broker";
import type { ConsumedRecord, ProducedRecord } from "../client/link.js";
import { KafkaPosition } from "../position.js";
import type { PartitionBook } from "./tracker.js";

/** What a delivery needs from the subscription that handed it out. */
export interface DeliveryOwner {
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
  readonly commit: "auto" | "tracked" | "transactional";
  /** Settled for good (an ack, a drop): the watermark may move. */
  settled(delivery: KafkaDelivery): void;
  /** Back to the subscription, ahead of the fetch, its offset still open (not under auto). */
  requeue(delivery: KafkaDelivery): void;
  /**
   * Under `transactional`: takes an output published on behalf of `delivery` into the transaction
   * that commits the delivery's offset, and answers `true`; `false` in the other modes.
   */
  stage(delivery: KafkaDelivery, record: ProducedRecord, raw: RawMessage): boolean;
}

/**
 * One record of a topic, handed out by a consumer group member. Its partition key is the record
 * key; `redeliveryCount` counts how often this member handed the record out (a requeue brings it
 * back counting one more; Kafka itself counts nothing). Under `auto` ack and drop are advisory and
 * a requeue is `unsupported`; under `tracked` ack and drop settle the offset and a requeue serves
 * the record again before anything fetched, its offset holding the committed position back until
 * it settles.
 */
export class KafkaDelivery extends DeliveryBase<KafkaPosition> {
  readonly record: ConsumedRecord;
  readonly redeliveryCount: number;
  /** The partition's books this delivery settles under; `undefined` under `auto`, which keeps none. */
  readonly book: PartitionBook | undefined;
  readonly #owner: DeliveryOwner;
  #headers: HeaderMap | undefined;

  constructor(
    owner: DeliveryOwner,
    record: ConsumedRecord,
    count: number,
    book: PartitionBook | undefined,
  ) {
    super();
    this.#owner = owner;
    this.record = record;
    this.redeliveryCount = count;
    this.book = book;
  }

  /** The topic the record came from (the main topic, or its retry topic). */
  get name(): string {
    return this.record.topic;
  }
  get payload(): Uint8Array {
    return this.record.value;
  }
  override get decodeError(): Error | undefined {
    return this.record.decodeError;
  }
  get headers(): ReadonlyHeaderMap {
    this.#headers ??= new HeaderMap(this.record.headers);
    return this.#headers;
  }
  /** The record key. */
  get partitionKey(): Uint8Array | undefined {
    return this.record.key;
  }
  override get partition(): number {
    return this.record.partition;
  }
  get offset(): bigint {
    return this.record.offset;
  }
  /** The record's timestamp, milliseconds since the epoch. */
  get timestamp(): number {
    return this.record.timestamp;
  }
  get position(): KafkaPosition {
    return KafkaPosition.offset(this.record.topic, this.record.partition, this.record.offset);
  }

  /** Whether outputs published on behalf of this delivery are staged for a transaction (`transactional`). */
  get stagesOutputs(): boolean {
    return this.#owner.commit === "transactional";
  }

  /**
   * Stages an output published on behalf of this delivery, under `transactional`: it becomes
   * visible with the transaction that commits this delivery's offset. `false` in the other modes.
   */
  stage(record: ProducedRecord, raw: RawMessage): boolean {
    return this.#owner.stage(this, record, raw);
  }

  protected settleAck(): SettleResult {
    this.#owner.assertOpen();
    this.#owner.settled(this);
    return "ok";
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.#owner.assertOpen();
    if (!requeue) {
      this.#owner.settled(this);
      return "ok";
    }
    // Under auto the client already stored this offset: nothing brings the record back.
    if (this.#owner.commit === "auto") return "unsupported";
    this.#owner.requeue(this);
    return "ok";
  }
}

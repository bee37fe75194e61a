import type {
  DeliveryReport,
  EngineTransactionalProducer,
  ProducedRecord,
  TransactionOffsets,
} from "../port.js";
import type { KjsProducer, KjsTransaction } from "./kafkajs.js";
import { produceRequest } from "./producer.js";

/**
 * A kafkajs producer with a transactionalId: each commit is one kafkajs transaction (the first
 * initialises the producer id, fencing an older producer with the same id). Records go one request
 * each, in order. A failure aborts; an abort that fails too leaves the producer unusable, and every
 * later commit says so.
 */
export class KafkajsTransactionalProducer implements EngineTransactionalProducer {
  readonly #producer: KjsProducer;
  readonly #compression: number | undefined;
  #broken: unknown;

  constructor(producer: KjsProducer, compression: number | undefined) {
    this.#producer = producer;
    this.#compression = compression;
  }

  async commit(
    records: readonly ProducedRecord[],
    offsets?: TransactionOffsets,
  ): Promise<DeliveryReport[]> {
    if (this.#broken !== undefined) throw this.#broken;
    const transaction = await this.#producer.transaction();
    try {
      const reports: DeliveryReport[] = [];
      for (const record of records) {
        const [metadata] = await transaction.send(produceRequest(record, this.#compression));
        const offset = metadata?.baseOffset ?? metadata?.offset ?? "-1";
        reports.push({ partition: metadata?.partition ?? -1, offset: BigInt(offset) });
      }
      if (offsets !== undefined && offsets.offsets.length > 0) {
        const topics = new Map<string, Array<{ partition: number; offset: string }>>();
        for (const o of offsets.offsets) {
          const list = topics.get(o.topic) ?? [];
          list.push({ partition: o.partition, offset: o.offset.toString() });
          topics.set(o.topic, list);
        }
        await transaction.sendOffsets({
          consumerGroupId: offsets.group,
          topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
        });
      }
      await transaction.commit();
      return reports;
    } catch (error) {
      await this.#abort(transaction);
      throw error;
    }
  }

  async #abort(transaction: KjsTransaction): Promise<void> {
    if (!transaction.isActive()) return;
    try {
      await transaction.abort();
    } catch (error) {
      this.#broken = error;
    }
  }

  async close(): Promise<void> {
    await this.#producer.disconnect().catch(() => undefined);
  }
}

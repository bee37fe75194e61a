import type {
  DeliveryReport,
  LinkTransactionalProducer,
  ProducedRecord,
  TransactionOffsets,
} from "../link.js";
import type { KjsProducer, KjsTransaction } from "./kafkajs.js";
import { produceMessage, produceRequest } from "./producer.js";

/**
 * A kafkajs producer with a transactionalId: each commit is one kafkajs transaction (the first
 * initialises the producer id, fencing an older producer with the same id). Records go one request
 * each, in order. A failure aborts; an abort that fails too leaves the producer unusable, and every
 * later commit says so.
 */
export class KafkajsTransactionalProducer implements LinkTransactionalProducer {
  readonly #producer: KjsProducer;
  readonly #compression: number | undefined;
  #broken: unknown;
  /** Told how each transaction ended (the link watches the connection through it). */
  readonly #ended: (error?: unknown) => void;

  constructor(
    producer: KjsProducer,
    compression: number | undefined,
    ended: (error?: unknown) => void = () => {},
  ) {
    this.#producer = producer;
    this.#compression = compression;
    this.#ended = ended;
  }

  async commit(
    records: readonly ProducedRecord[],
    offsets?: TransactionOffsets,
  ): Promise<DeliveryReport[]> {
    // Refused at subscribe (engines.ts): kafkajs commits a transaction's offsets without the group
    // generation, which the transactional commit mode cannot be built on.
    if (offsets !== undefined) {
      throw new Error("the kafkajs engine commits no consumer offsets in a transaction");
    }
    if (this.#broken !== undefined) throw this.#broken;
    const transaction = await this.#producer.transaction();
    try {
      const reports: DeliveryReport[] = [];
      for (const record of records) {
        const [metadata] = await transaction.send(
          produceRequest(record.topic, [produceMessage(record)], this.#compression),
        );
        const offset = metadata?.baseOffset ?? metadata?.offset ?? "-1";
        reports.push({ partition: metadata?.partition ?? -1, offset: BigInt(offset) });
      }
      await transaction.commit();
      this.#ended();
      return reports;
    } catch (error) {
      this.#ended(error);
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

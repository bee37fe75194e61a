import type {
  DeliveryReport,
  LinkTransactionalProducer,
  ProducedRecord,
  TransactionOffsets,
} from "./client/link.js";

/**
 * The transactions of one transactional id, one after another. Kafka runs one transaction at a time
 * on a producer, and two producers with one id fence each other, so every publisher of a
 * connection using the id shares this line: a transaction's staged records wait here for the one
 * before to commit or abort.
 */
export class TransactionLine {
  /** The settings the producer was opened with, as a key: another policy naming the id must match. */
  readonly settings: string;
  readonly #producer: Promise<LinkTransactionalProducer>;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(settings: string, producer: Promise<LinkTransactionalProducer>) {
    this.settings = settings;
    this.#producer = producer;
    // A producer that failed to open rejects each commit instead.
    producer.catch(() => undefined);
  }

  commit(
    records: readonly ProducedRecord[],
    offsets?: TransactionOffsets,
  ): Promise<DeliveryReport[]> {
    const run = this.#tail.then(async () => (await this.#producer).commit(records, offsets));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Waits for the transaction under way, then closes the producer. */
  async close(): Promise<void> {
    await this.#tail;
    const producer = await this.#producer.catch(() => undefined);
    await producer?.close();
  }
}

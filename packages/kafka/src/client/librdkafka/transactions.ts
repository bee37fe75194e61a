import type {
  DeliveryReport,
  EngineTransactionalProducer,
  ProducedRecord,
  TransactionOffsets,
} from "../port.js";
import { RdkafkaConsumer } from "./consumer.js";
import { RdkafkaProducer } from "./producer.js";
import { callVoid, type RdConsumer, type RdError, type RdProducer } from "./rdkafka.js";

/** The client of the member whose positions a transaction commits (it carries the group metadata). */
function memberOf(offsets: TransactionOffsets): RdConsumer {
  if (!(offsets.consumer instanceof RdkafkaConsumer)) {
    throw new Error("a librdkafka transaction commits positions of a librdkafka consumer only");
  }
  return offsets.consumer.client;
}

/**
 * A librdkafka producer with a transactional id. Sends go through {@link RdkafkaProducer} (each
 * resolves on its delivery report); `commitTransaction` flushes them first, so by the time it
 * answers every report is in. A failed step aborts; an abort that fails too, or a fatal error (a
 * newer producer with the same id fenced this one), leaves the producer unusable, and every later
 * commit says so.
 */
export class RdkafkaTransactionalProducer implements EngineTransactionalProducer {
  readonly #producer: RdProducer;
  readonly #sender: RdkafkaProducer;
  readonly #timeoutMs: number;
  #broken: RdError | undefined;

  private constructor(producer: RdProducer, timeoutMs: number) {
    this.#producer = producer;
    this.#sender = new RdkafkaProducer(producer);
    this.#timeoutMs = timeoutMs;
  }

  /** Takes a connected producer and initialises its transactions (fencing older ones). */
  static async init(
    producer: RdProducer,
    timeoutMs: number,
  ): Promise<RdkafkaTransactionalProducer> {
    await callVoid((cb) => producer.initTransactions(timeoutMs, cb));
    return new RdkafkaTransactionalProducer(producer, timeoutMs);
  }

  async commit(
    records: readonly ProducedRecord[],
    offsets?: TransactionOffsets,
  ): Promise<DeliveryReport[]> {
    if (this.#broken !== undefined) throw this.#broken;
    const member = offsets === undefined ? undefined : memberOf(offsets);
    await callVoid((cb) => this.#producer.beginTransaction(cb));
    const sends = records.map((record) => this.#sender.send(record));
    // Settled before anything can fail, so no send's rejection is left unhandled.
    const outcomes = Promise.allSettled(sends);
    try {
      if (offsets !== undefined && member !== undefined && offsets.offsets.length > 0) {
        const positions = offsets.offsets.map((o) => ({
          topic: o.topic,
          partition: o.partition,
          offset: Number(o.offset),
        }));
        await callVoid((cb) =>
          this.#producer.sendOffsetsToTransaction(positions, member, this.#timeoutMs, cb),
        );
      }
      await callVoid((cb) => this.#producer.commitTransaction(this.#timeoutMs, cb));
    } catch (error) {
      await this.#abort(error as RdError);
      throw error;
    }
    // A committed transaction has every record delivered: commitTransaction flushes first.
    const reports: DeliveryReport[] = [];
    for (const outcome of await outcomes) {
      if (outcome.status === "rejected") throw outcome.reason;
      reports.push(outcome.value);
    }
    return reports;
  }

  async #abort(cause: RdError): Promise<void> {
    if (cause.isFatal === true) {
      this.#broken = cause;
      return;
    }
    try {
      await callVoid((cb) => this.#producer.abortTransaction(this.#timeoutMs, cb));
    } catch (error) {
      this.#broken = error as RdError;
    }
  }

  close(): Promise<void> {
    return this.#sender.close();
  }
}

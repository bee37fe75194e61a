import type {
  DeliveryReport,
  LinkTransactionalProducer,
  ProducedRecord,
  TransactionOffsets,
} from "../link.js";
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

/** Builds and connects a librdkafka producer under the transactional id (not yet initialised). */
export type ConnectProducer = () => Promise<RdProducer>;

/** One librdkafka producer under the id, its transactions initialised, and its sender. */
interface Session {
  readonly producer: RdProducer;
  readonly sender: RdkafkaProducer;
}

/**
 * A librdkafka producer with a transactional id. Sends go through {@link RdkafkaProducer} (each
 * resolves on its delivery report); `commitTransaction` flushes them first, so by the time it
 * answers every report is in. A failed step aborts; an abort that fails too, or a fatal error (a
 * newer producer with the same id fenced this one), leaves the producer unusable, and every later
 * commit says so.
 *
 * After an abort the next transaction runs on a fresh producer with the same id. librdkafka keeps
 * its idempotent sequence numbers across an abort and renumbers only after errors it flags for an
 * epoch bump: a batch the cluster refused for good (a record over the topic's max.message.bytes)
 * is not one of them, so the next transaction's first batch to that partition skipped the refused
 * sequence numbers, the broker refused it (OUT_OF_ORDER_SEQUENCE_NUMBER, "skipped sequence
 * numbers") and that transaction aborted too. A fresh producer's initTransactions fences the old
 * epoch and starts every sequence at zero, so one refusal costs one transaction, as on kafkajs.
 */
export class RdkafkaTransactionalProducer implements LinkTransactionalProducer {
  readonly #connect: ConnectProducer;
  readonly #timeoutMs: number;
  /** The producer the next transaction runs on; after an abort, its replacement being opened. */
  #session: Promise<Session>;
  #broken: RdError | undefined;

  private constructor(connect: ConnectProducer, timeoutMs: number, session: Session) {
    this.#connect = connect;
    this.#timeoutMs = timeoutMs;
    this.#session = Promise.resolve(session);
  }

  /** Opens the first producer and initialises its transactions (fencing older ones). */
  static async open(
    connect: ConnectProducer,
    timeoutMs: number,
  ): Promise<RdkafkaTransactionalProducer> {
    return new RdkafkaTransactionalProducer(
      connect,
      timeoutMs,
      await initialised(connect, timeoutMs),
    );
  }

  async commit(
    records: readonly ProducedRecord[],
    offsets?: TransactionOffsets,
  ): Promise<DeliveryReport[]> {
    if (this.#broken !== undefined) throw this.#broken;
    const member = offsets === undefined ? undefined : memberOf(offsets);
    const session = await this.#current();
    const producer = session.producer;
    await callVoid((cb) => producer.beginTransaction(cb));
    const sends = records.map((record) => session.sender.send(record));
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
          producer.sendOffsetsToTransaction(positions, member, this.#timeoutMs, cb),
        );
      }
      await callVoid((cb) => producer.commitTransaction(this.#timeoutMs, cb));
    } catch (error) {
      await this.#abort(session, error as RdError);
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

  async #abort(session: Session, cause: RdError): Promise<void> {
    if (cause.isFatal === true) {
      this.#broken = cause;
      return;
    }
    try {
      await callVoid((cb) => session.producer.abortTransaction(this.#timeoutMs, cb));
    } catch (error) {
      this.#broken = error as RdError;
      return;
    }
    // Opened now, while the caller handles the failure (the window rewinds meanwhile); the next
    // transaction waits for it. Never after a fatal error: a fenced producer reopening would fence
    // the instance that now owns the id.
    const replacement = this.#replace(session);
    // A failure to open it is the next transaction's to report (#current), or nobody's after close().
    replacement.catch(() => undefined);
    this.#session = replacement;
  }

  async #replace(old: Session): Promise<Session> {
    await old.sender.close();
    return initialised(this.#connect, this.#timeoutMs);
  }

  /** The producer for the next transaction; a replacement that failed to open is tried again. */
  #current(): Promise<Session> {
    this.#session = this.#session.catch(() => initialised(this.#connect, this.#timeoutMs));
    return this.#session;
  }

  async close(): Promise<void> {
    const session = await this.#session.catch(() => undefined);
    await session?.sender.close();
  }
}

/** A connected producer with its transactions initialised; closed again when that fails. */
async function initialised(connect: ConnectProducer, timeoutMs: number): Promise<Session> {
  const producer = await connect();
  try {
    await callVoid((cb) => producer.initTransactions(timeoutMs, cb));
  } catch (error) {
    await callVoid((cb) => producer.disconnect(cb)).catch(() => undefined);
    throw error;
  }
  return { producer, sender: new RdkafkaProducer(producer) };
}

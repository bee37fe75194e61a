import type {
  DeliveryReport,
  LinkTransactionalProducer,
  ProducedRecord,
  TransactionOffsets,
} from "../link.js";
import { RdkafkaConsumer } from "./consumer.js";
import { RdkafkaProducer } from "./producer.js";
import { callVoid, type RdConsumer, type RdError, type RdProducer } from "./rdkafka.js";

/** How long past its own timeout a transaction call may stay unanswered before it counts as hung. */
export const HUNG_GRACE_MS = 5_000;

/** A transaction call librdkafka did not answer within its timeout and {@link HUNG_GRACE_MS}. */
export class HungCall extends Error {
  readonly code = -185;
  constructor(step: string, ms: number) {
    super(
      `librdkafka's ${step} did not answer within ${ms} ms (its own timeout had passed); the transaction is given up and the next one runs on a fresh producer under the id`,
    );
  }
}

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
  /** Transaction calls under way on it: a dropped producer is closed once they have returned. */
  readonly calls: Set<Promise<void>>;
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
 *
 * A transaction call librdkafka never answers is given up on: `sendOffsetsToTransaction` can hang
 * past its timeout for good when the group's coordinator dies (librdkafka issues 5456 and 5511,
 * open for 2.14 and 2.15: the coordinator request's timeout is never checked, and a coordinator
 * dropped from the metadata is never looked up again). The chaos suite's `kafka-transactional` met
 * it when a leader-kill took the group coordinator's node: the window's transaction never ended,
 * so the revocation waiting for it never did, the whole (eager) group waited, and the open
 * transaction kept the group's offsets unstable for the partitions' next owner. A call still
 * unanswered {@link HUNG_GRACE_MS} after its own timeout fails the transaction; the producer is
 * dropped (closed once the call returns, if ever) and the next transaction runs on a fresh one under
 * the id, whose initTransactions fences the stuck one and aborts its transaction. An abort that
 * fails without a fatal error is handled the same way, rather than leaving the id unusable.
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
    try {
      await this.#answered(session, "beginTransaction", (cb) => producer.beginTransaction(cb));
    } catch (error) {
      if (error instanceof HungCall) this.#drop(session);
      throw error;
    }
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
        await this.#answered(session, "sendOffsetsToTransaction", (cb) =>
          producer.sendOffsetsToTransaction(positions, member, this.#timeoutMs, cb),
        );
      }
      await this.#answered(session, "commitTransaction", (cb) =>
        producer.commitTransaction(this.#timeoutMs, cb),
      );
    } catch (error) {
      // A call still running refuses every other on the producer, an abort among them.
      if (error instanceof HungCall) this.#drop(session);
      else await this.#abort(session, error as RdError);
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
      await this.#answered(session, "abortTransaction", (cb) =>
        session.producer.abortTransaction(this.#timeoutMs, cb),
      );
    } catch (error) {
      // Fenced meanwhile: the id is another instance's now. Anything else (the abort timed out,
      // hung): a fresh producer's initTransactions aborts what this one left open.
      if ((error as RdError).isFatal === true) {
        this.#broken = error as RdError;
        return;
      }
      this.#drop(session);
      return;
    }
    // Opened now, while the caller handles the failure (the window rewinds meanwhile); the next
    // transaction waits for it. Never after a fatal error: a fenced producer reopening would fence
    // the instance that now owns the id.
    this.#renew(this.#replace(session.sender.close()));
  }

  /**
   * A producer whose call hangs (or whose abort failed) is left: closed once its calls returned,
   * not before (its close would wait on them, holding one more of libuv's threads), and never
   * awaited. The next transaction runs on a fresh producer, whose initTransactions fences this one.
   */
  #drop(session: Session): void {
    const pending = [...session.calls];
    void Promise.allSettled(pending).then(() => session.sender.close());
    this.#renew(this.#replace(Promise.resolve()));
  }

  #renew(replacement: Promise<Session>): void {
    // A failure to open it is the next transaction's to report (#current), or nobody's after close().
    replacement.catch(() => undefined);
    this.#session = replacement;
  }

  async #replace(closed: Promise<void>): Promise<Session> {
    await closed;
    return initialised(this.#connect, this.#timeoutMs);
  }

  /**
   * One transaction call, answered or given up on: unanswered {@link HUNG_GRACE_MS} past the
   * producer's timeout, it rejects with {@link HungCall} (the native call keeps running, and the
   * session remembers it until it returns).
   */
  async #answered(
    session: Session,
    step: string,
    work: (cb: (error: RdError | null | undefined) => void) => unknown,
  ): Promise<void> {
    const call = callVoid(work);
    session.calls.add(call);
    const forget = () => session.calls.delete(call);
    call.then(forget, forget);
    const ms = this.#timeoutMs + HUNG_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HungCall(step, ms)), ms);
    });
    try {
      await Promise.race([call, hung]);
    } finally {
      clearTimeout(timer);
    }
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
  return { producer, sender: new RdkafkaProducer(producer), calls: new Set() };
}

import type { DeliveryReport, LinkProducer, ProducedRecord } from "../link.js";
import type {
  KjsOutgoingMessage,
  KjsProduceRequest,
  KjsProducer,
  KjsRecordMetadata,
} from "./kafkajs.js";

function buffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** One record as a kafkajs message (kafkajs copies nothing, so views suffice). */
export function produceMessage(record: ProducedRecord): KjsOutgoingMessage {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of record.headers) headers[name] = buffer(value);
  return {
    key: record.key === undefined ? null : buffer(record.key),
    value: buffer(record.value),
    ...(record.partition === undefined ? {} : { partition: record.partition }),
    headers,
  };
}

/** A kafkajs produce request: `messages`, in order, to `topic`. */
export function produceRequest(
  topic: string,
  messages: KjsOutgoingMessage[],
  compression: number | undefined,
): KjsProduceRequest {
  return { topic, ...(compression === undefined ? {} : { compression }), messages };
}

// What one request carries at most, by `sizeOf` (librdkafka's default `batch.size`): a partition's
// records of a request are one record batch, which the cluster refuses over its
// `message.max.bytes` (1 048 588 by default). A larger record still goes, alone.
const REQUEST_BYTES = 1_000_000;
// A record's framing in a batch, at most: its length, attributes, timestamp and offset deltas, key
// and value lengths and header count, as varints; and each header's two lengths.
const RECORD_OVERHEAD = 40;
const HEADER_OVERHEAD = 10;

function sizeOf(record: ProducedRecord): number {
  let size = RECORD_OVERHEAD + record.value.length + (record.key?.length ?? 0);
  for (const [name, value] of record.headers) {
    size += HEADER_OVERHEAD + Buffer.byteLength(name) + value.length;
  }
  return size;
}

/** A send waiting for its delivery report. */
interface Pending {
  readonly message: KjsOutgoingMessage;
  readonly size: number;
  resolve(report: DeliveryReport): void;
  reject(error: unknown): void;
}

/**
 * A kafkajs producer whose records keep the order they were sent in, per topic (so per partition),
 * as librdkafka's queues keep it. kafkajs does not: each `send()` is a request of its own, with its
 * own metadata wait and its own retries, so sends made one after another without waiting for each
 * (the runtime's dead letters and replies) landed in whatever order their requests got through. So
 * a topic has one request in flight at a time, and what is sent meanwhile waits, in order, and goes
 * as the next request (up to `REQUEST_BYTES`).
 */
export class KafkajsProducer implements LinkProducer {
  readonly #producer: KjsProducer;
  /** kafkajs's code for the codec, or `undefined` for none. */
  readonly #compression: number | undefined;
  /** The sends waiting behind each topic's request in flight; a topic is here while one is. */
  readonly #waiting = new Map<string, Pending[]>();
  #inflight = 0;
  #drained: (() => void) | undefined;
  /** Told how each produce request ended (the link watches the connection through it). */
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

  send(record: ProducedRecord): Promise<DeliveryReport> {
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        message: produceMessage(record),
        size: sizeOf(record),
        resolve: (report) => {
          this.#settled();
          resolve(report);
        },
        reject: (error) => {
          this.#settled();
          reject(error);
        },
      };
      this.#inflight++;
      const waiting = this.#waiting.get(record.topic);
      if (waiting !== undefined) {
        waiting.push(pending);
        return;
      }
      this.#waiting.set(record.topic, [pending]);
      // The topic's first request leaves once this tick's sends are in (a nextTick runs after the
      // tick's promise reactions): sends made together, a window of publishes or the replies of a
      // batch of handlers, go as one request. Sent at once, the first went alone and the rest
      // waited a round trip behind it, so requests alternated between one record and all the others.
      process.nextTick(() => void this.#drain(record.topic));
    });
  }

  /** Sends what waits for `topic`, then whatever was sent to it meanwhile, until nothing waits. */
  async #drain(topic: string): Promise<void> {
    for (let next = this.#take(topic); next.length > 0; next = this.#take(topic)) {
      await this.#request(topic, next);
    }
    this.#waiting.delete(topic);
  }

  /** The next request's records: those waiting for `topic`, from the first, up to `REQUEST_BYTES`. */
  #take(topic: string): Pending[] {
    const waiting = this.#waiting.get(topic) ?? [];
    let count = 0;
    let size = 0;
    while (count < waiting.length) {
      size += waiting[count]!.size;
      if (count > 0 && size > REQUEST_BYTES) break;
      count++;
    }
    return waiting.splice(0, count);
  }

  /**
   * One produce request for `batch`; settles every send in it, never rejects. `again`: the batch is
   * what an earlier request left unconfirmed.
   */
  async #request(topic: string, batch: readonly Pending[], again = false): Promise<void> {
    const messages = batch.map((p) => p.message);
    let metadata: KjsRecordMetadata[];
    try {
      metadata = await this.#producer.send(produceRequest(topic, messages, this.#compression));
    } catch (error) {
      this.#ended(error);
      if (batch.length > 1 && refusesRecords(error)) {
        // A refusal of one record (too large, invalid) fails the whole request: each goes again on
        // its own, in order, so only the refused one fails.
        for (const pending of batch) await this.#request(topic, [pending]);
        return;
      }
      for (const pending of batch) pending.reject(error);
      return;
    }
    this.#ended();
    // The engine's partitioner wrote each record's partition on its message (engine.ts); kafkajs
    // answers one base offset per partition, and a partition's records follow it in order.
    const next = new Map<number, bigint>();
    for (const m of metadata) next.set(m.partition, BigInt(m.baseOffset ?? m.offset ?? "-1"));
    const unconfirmed: Pending[] = [];
    for (const pending of batch) {
      const partition = pending.message.partition;
      const offset = partition === undefined ? undefined : next.get(partition);
      if (partition === undefined || offset === undefined || offset < 0n) {
        unconfirmed.push(pending);
        continue;
      }
      next.set(partition, offset + 1n);
      pending.resolve({ partition, offset });
    }
    if (unconfirmed.length === 0) return;
    // kafkajs retries a request per broker and keeps the answers of brokers that took their part:
    // a partition whose leader moved to one of those during the retries is never sent, and the
    // send resolves without it (seen on a failover). Those records go again, before anything
    // published after them, so their partition's order holds.
    if (!again) {
      await this.#request(topic, unconfirmed, true);
      return;
    }
    const error = new Error(
      `kafkajs confirmed no offset for ${unconfirmed.length} record(s) of "${topic}", sent twice`,
    );
    for (const pending of unconfirmed) pending.reject(error);
  }

  #settled(): void {
    this.#inflight--;
    if (this.#inflight === 0) this.#drained?.();
  }

  async flush(timeoutMs: number): Promise<number> {
    if (this.#inflight === 0) return 0;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#drained = undefined;
    return this.#inflight;
  }

  async close(): Promise<void> {
    await this.#producer.disconnect().catch(() => undefined);
  }
}

/**
 * Whether kafkajs gave up on a request for what is in it rather than for the cluster: an error it
 * does not retry, other than retries running out.
 */
function refusesRecords(error: unknown): boolean {
  const { retriable, name } = error as { retriable?: unknown; name?: unknown };
  return retriable === false && name !== "KafkaJSNumberOfRetriesExceeded";
}

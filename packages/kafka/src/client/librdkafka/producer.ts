import type { DeliveryReport, LinkProducer, ProducedRecord } from "../link.js";
import { callVoid, type RdError, type RdHeader, type RdProducer } from "./rdkafka.js";

interface Waiting {
  resolve(report: DeliveryReport): void;
  reject(error: unknown): void;
}

/**
 * A librdkafka producer whose sends resolve on their delivery report: each record carries a number
 * as its opaque, and the report that comes back with it settles that send. Reports are served on
 * librdkafka's background thread (`setPollInBackground`), so nothing polls from the event loop.
 */
export class RdkafkaProducer implements LinkProducer {
  readonly #producer: RdProducer;
  readonly #waiting = new Map<number, Waiting>();
  #next = 0;

  constructor(producer: RdProducer) {
    this.#producer = producer;
    producer.setPollInBackground(true);
    producer.on("delivery-report", (error, report) => this.#report(error, report.opaque, report));
  }

  send(record: ProducedRecord): Promise<DeliveryReport> {
    const id = ++this.#next;
    const headers: RdHeader[] = record.headers.map(([name, value]) => ({
      [name]: Buffer.from(value.buffer, value.byteOffset, value.byteLength),
    }));
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      try {
        this.#producer.produce(
          record.topic,
          record.partition ?? -1,
          Buffer.from(record.value.buffer, record.value.byteOffset, record.value.byteLength),
          record.key === undefined
            ? null
            : Buffer.from(record.key.buffer, record.key.byteOffset, record.key.byteLength),
          null,
          id,
          headers,
        );
      } catch (error) {
        // Refused before it was queued (a full queue, a record too large): no report will come.
        this.#waiting.delete(id);
        reject(error);
      }
    });
  }

  async flush(timeoutMs: number): Promise<number> {
    try {
      await callVoid((cb) => this.#producer.flush(timeoutMs, cb));
    } catch {
      // A flush that timed out leaves the unreported ones counted below.
    }
    return this.#waiting.size;
  }

  async close(): Promise<void> {
    await callVoid((cb) => this.#producer.disconnect(cb)).catch(() => undefined);
    const error = new Error("the producer closed before the record's delivery report arrived");
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }

  #report(
    error: RdError | null | undefined,
    id: number,
    report: { partition: number; offset: number },
  ): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    this.#waiting.delete(id);
    if (error) waiting.reject(error);
    else waiting.resolve({ partition: report.partition, offset: BigInt(report.offset) });
  }
}

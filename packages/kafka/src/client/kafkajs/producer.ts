import type { DeliveryReport, EngineProducer, ProducedRecord } from "../port.js";
import type { KjsProduceRequest, KjsProducer } from "./kafkajs.js";

function buffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** One record as a kafkajs produce request (kafkajs copies nothing, so views suffice). */
export function produceRequest(
  record: ProducedRecord,
  compression: number | undefined,
): KjsProduceRequest {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of record.headers) headers[name] = buffer(value);
  return {
    topic: record.topic,
    ...(compression === undefined ? {} : { compression }),
    messages: [
      {
        key: record.key === undefined ? null : buffer(record.key),
        value: buffer(record.value),
        ...(record.partition === undefined ? {} : { partition: record.partition }),
        headers,
      },
    ],
  };
}

/** A kafkajs producer: each send is one request, resolved by the broker's produce response. */
export class KafkajsProducer implements EngineProducer {
  readonly #producer: KjsProducer;
  /** kafkajs's code for the codec, or `undefined` for none. */
  readonly #compression: number | undefined;
  #inflight = 0;
  #drained: (() => void) | undefined;

  constructor(producer: KjsProducer, compression: number | undefined) {
    this.#producer = producer;
    this.#compression = compression;
  }

  async send(record: ProducedRecord): Promise<DeliveryReport> {
    const request = produceRequest(record, this.#compression);
    this.#inflight++;
    try {
      const [metadata] = await this.#producer.send(request);
      const offset = metadata?.baseOffset ?? metadata?.offset ?? "-1";
      return { partition: metadata?.partition ?? -1, offset: BigInt(offset) };
    } finally {
      this.#inflight--;
      if (this.#inflight === 0) this.#drained?.();
    }
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

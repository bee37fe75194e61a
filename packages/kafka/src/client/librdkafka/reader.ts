import type { ConsumedRecord, LinkReader, PartitionOffset } from "../link.js";
import { recordOf } from "./consumer.js";
import { CONSUME_MAX, CONSUME_WAIT_MS } from "./pull.js";
import { call, callVoid, type RdConsumer, type RdError, type RdMessage } from "./rdkafka.js";

const TIMEOUT_MS = 10_000;

/**
 * A librdkafka consumer assigned its partitions at their offsets (`assign`, no `subscribe`): no
 * group join, no coordinator, no rebalance. A loop pulls with `consume(n)` until it is closed.
 */
export class RdkafkaReader implements LinkReader {
  readonly #consumer: RdConsumer;
  readonly #records: (records: readonly ConsumedRecord[]) => void;
  #running = true;
  #loop: Promise<void> = Promise.resolve();

  private constructor(consumer: RdConsumer, records: (records: readonly ConsumedRecord[]) => void) {
    this.#consumer = consumer;
    this.#records = records;
  }

  static async open(
    consumer: RdConsumer,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ): Promise<RdkafkaReader> {
    await call((cb) => consumer.connect({ timeout: TIMEOUT_MS }, cb));
    consumer.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
    consumer.setDefaultIsTimeoutOnlyForFirstMessage(true);
    try {
      consumer.assign(
        partitions.map((p) => ({
          topic: p.topic,
          partition: p.partition,
          offset: Number(p.offset),
        })),
      );
    } catch (error) {
      await callVoid((cb) => consumer.disconnect(cb)).catch(() => undefined);
      throw error;
    }
    const reader = new RdkafkaReader(consumer, records);
    reader.#loop = reader.#run();
    return reader;
  }

  async close(): Promise<void> {
    this.#running = false;
    await this.#loop.catch(() => undefined);
    // Bounded: a cluster that went away must not hold the shutdown.
    await Promise.race([
      callVoid((cb) => this.#consumer.disconnect(cb)).catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS).unref()),
    ]);
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let messages: RdMessage[];
      try {
        messages = await call<RdMessage[]>((cb) => this.#consumer.consume(CONSUME_MAX, cb));
      } catch (error) {
        // A fatal error ends reading: the requests still waiting time out.
        if (!this.#running || (error as RdError).isFatal === true) return;
        // Transient (a broker restarting, a leader moving): librdkafka retries; so do we.
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      if (messages.length > 0 && this.#running) {
        this.#records(messages.map((m) => recordOf(m, m.topic)));
      }
    }
  }
}

// A Producer sends to a topic, partitioned or not, through one partition producer per partition:
// a message goes to its explicit partition, else to the partition its key hashes to (as the Java
// client chooses), else to the next partition in turn.
import { RustStreamError } from "@ruststream/core";
import { closedError } from "../errors.js";
import type { ClientHost } from "../host.js";
import type { MessageId } from "../messageId.js";
import { type HashingScheme, partitionForKey } from "../murmur3.js";
import { parseTopicName, partitionTopicName } from "../topicName.js";
import { PartitionProducer } from "./partitionProducer.js";
import type { OutgoingMessage, ProducerOptions } from "./producerOptions.js";

/** A producer on a topic, partitioned or not: keyed messages go to the partition the key hashes to. */
export class Producer {
  #roundRobin = 0;
  #closed = false;
  readonly #producers: PartitionProducer[];
  readonly #hashingScheme: HashingScheme;

  private constructor(
    /** The topic's full name. */
    readonly topic: string,
    /** The number of partitions; 0 for a non-partitioned topic. */
    readonly partitions: number,
    producers: PartitionProducer[],
    hashingScheme: HashingScheme,
  ) {
    this.#producers = producers;
    this.#hashingScheme = hashingScheme;
    this.#roundRobin = Math.floor(Math.random() * Math.max(1, producers.length));
  }

  /** Looks the topic up and connects a producer to it (one per partition). */
  static async create(host: ClientHost, options: ProducerOptions): Promise<Producer> {
    const name = parseTopicName(options.topic);
    const partitions = name.partition >= 0 ? 0 : await host.partitions(name.full);
    const producers =
      partitions === 0
        ? [new PartitionProducer(host, name.full, name.partition, options)]
        : Array.from(
            { length: partitions },
            (_, i) => new PartitionProducer(host, partitionTopicName(name, i), i, options),
          );
    const started = await Promise.allSettled(producers.map((p) => p.start()));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) {
      await Promise.all(producers.map((p) => p.close()));
      throw failed.reason;
    }
    return new Producer(
      name.full,
      partitions,
      producers,
      options.hashingScheme ?? "JavaStringHash",
    );
  }

  /** The producer of each partition (one for a non-partitioned topic). */
  get partitionProducers(): readonly PartitionProducer[] {
    return this.#producers;
  }

  /** The partition a message goes to: its explicit partition, its key's hash, or the next in turn. */
  choosePartition(message: OutgoingMessage): number {
    if (this.partitions === 0) return 0;
    if (message.partition !== undefined) {
      if (
        !Number.isInteger(message.partition) ||
        message.partition < 0 ||
        message.partition >= this.partitions
      )
        throw new RustStreamError(
          "invalid-argument",
          `partition ${message.partition} does not exist on ${this.topic} (${this.partitions} partitions)`,
        );
      return message.partition;
    }
    if (message.key !== undefined)
      return partitionForKey(message.key, this.partitions, this.#hashingScheme);
    this.#roundRobin = (this.#roundRobin + 1) % this.partitions;
    return this.#roundRobin;
  }

  /** Sends a message; resolves with its id once the broker has stored it. */
  send(message: OutgoingMessage): Promise<MessageId> {
    if (this.#closed) return Promise.reject(closedError(`producer on ${this.topic}`));
    let index: number;
    try {
      index = this.choosePartition(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#producers[index]!.send(message);
  }

  /** Sends what is batched and waits for every receipt outstanding. */
  async flush(): Promise<void> {
    await Promise.all(this.#producers.map((p) => p.flush()));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#producers.map((p) => p.close()));
  }
}

import {
  type ConsumedRecord,
  type ConsumerHooks,
  type LinkConsumer,
  type LinkReader,
  type PartitionOffset,
  partitionKey,
} from "../link.js";
import type { KjsAdmin } from "./kafkajs.js";

/**
 * kafkajs has no consumer outside a group (no `assign`), so its reader is a group of one: a member
 * of a group named after the reader, placed at the reader's offsets when the group assigns it the
 * partitions, committing nothing. Closing it leaves the group and deletes it, so nothing stays on
 * the cluster. The join is what a kafkajs reader costs over librdkafka's: a coordinator holds the
 * first join of a new group for `group.initial.rebalance.delay.ms` (3 s by default).
 */
export class KafkajsReader implements LinkReader {
  readonly #consumer: LinkConsumer;
  readonly #admin: KjsAdmin;
  readonly #group: string;

  private constructor(consumer: LinkConsumer, admin: KjsAdmin, group: string) {
    this.#consumer = consumer;
    this.#admin = admin;
    this.#group = group;
  }

  /** `member` makes the group's consumer with the hooks given; it is started here. */
  static async open(
    member: (hooks: ConsumerHooks) => LinkConsumer,
    admin: KjsAdmin,
    group: string,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ): Promise<KafkajsReader> {
    const starts = new Map(partitions.map((p) => [partitionKey(p), p]));
    const consumer = member({
      assigned: async (assigned) =>
        assigned.flatMap((p) => {
          const start = starts.get(partitionKey(p));
          return start === undefined ? [] : [start];
        }),
      revoked: async () => {},
      records,
      // Reading ended for good: the requests still waiting time out.
      failed: () => {},
    });
    const reader = new KafkajsReader(consumer, admin, group);
    try {
      await consumer.start();
    } catch (error) {
      await reader.close();
      throw error;
    }
    return reader;
  }

  async close(): Promise<void> {
    await this.#consumer.close();
    // Best effort: an empty group that committed nothing also expires on its own, in time.
    await this.#admin.deleteGroups([this.#group]).catch(() => undefined);
  }
}

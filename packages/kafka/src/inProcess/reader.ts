import {
  type ConsumedRecord,
  type LinkReader,
  type PartitionOffset,
  partitionKey,
  type TopicPartition,
} from "../client/link.js";
import type { InProcessCluster } from "./cluster.js";

const FETCH_MAX = 256;

/**
 * A reader of the stand-in: it hands over what its partitions hold past its positions, read_committed
 * as a consumer is, on a microtask after each append. It belongs to no group and is not counted for
 * the test's coordinator: what it reads (replies) is no delivery anybody settles.
 */
export class InProcessReader implements LinkReader {
  readonly #cluster: InProcessCluster;
  readonly #records: (records: readonly ConsumedRecord[]) => void;
  readonly #positions = new Map<string, { readonly tp: TopicPartition; offset: bigint }>();
  readonly #unlisten: () => void;
  #scheduled = false;
  #closed = false;

  constructor(
    cluster: InProcessCluster,
    partitions: readonly PartitionOffset[],
    records: (records: readonly ConsumedRecord[]) => void,
  ) {
    this.#cluster = cluster;
    this.#records = records;
    for (const p of partitions) {
      this.#positions.set(partitionKey(p), {
        tp: { topic: p.topic, partition: p.partition },
        offset: p.offset,
      });
    }
    this.#unlisten = cluster.listen((tp) => {
      if (this.#positions.has(partitionKey(tp))) this.#schedule();
    });
    this.#schedule();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unlisten();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#fetch();
    });
  }

  #fetch(): void {
    if (this.#closed) return;
    const batch: ConsumedRecord[] = [];
    for (const position of this.#positions.values()) {
      const { records, next } = this.#cluster.read(
        position.tp.topic,
        position.tp.partition,
        position.offset,
        FETCH_MAX - batch.length,
      );
      position.offset = next;
      batch.push(...records);
      if (batch.length >= FETCH_MAX) break;
    }
    if (batch.length === 0) return;
    this.#records(batch);
    this.#schedule();
  }
}

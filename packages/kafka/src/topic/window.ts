import { type RawMessage, RustStreamError } from "@ruststream/core";
import {
  type LinkConsumer,
  type PartitionOffset,
  type ProducedRecord,
  partitionKey,
  type TopicPartition,
} from "../client/link.js";
import type { TransactionLine } from "../transactions.js";
import type { PartitionBook } from "./tracker.js";

/** How long settled work waits for its transaction (RustStream's commit interval). */
export const COMMIT_INTERVAL_MS = 100;

/**
 * Transactions failing one after another before the subscription fails: a fenced producer (another
 * instance opened the same transactional id) or a refusal that every replay meets again would
 * otherwise replay the same inputs for ever.
 */
export const FAILURES_IN_A_ROW = 5;

/**
 * Where a delivery's outputs belong: its partition, the books it was handed out under (closed once
 * the partition is rewound, sought or revoked) and its offset.
 */
export interface OutputCause {
  readonly key: string;
  readonly book: PartitionBook | undefined;
  readonly offset: bigint;
}

/** An output staged for the transaction of the delivery it was published for. */
interface Output extends OutputCause {
  readonly record: ProducedRecord;
  /** What the in-process `published()` keeps, once the output is committed. */
  readonly raw: RawMessage;
}

/** What the window needs from its subscription. */
export interface WindowOwner {
  readonly group: string;
  readonly consumer: LinkConsumer;
  /**
   * A transaction failed: every partition held goes back to the position last committed (fresh
   * books, nothing buffered, the engine's fetch moved), so what was handed out since is read again.
   */
  rewind(to: ReadonlyMap<string, PartitionOffset>): Promise<void>;
  /** An output was committed: the in-process connection keeps a copy for the test. */
  published(raw: RawMessage): void;
  /** Transactions keep failing: the subscription fails with this error. */
  failed(error: unknown): void;
}

/**
 * The `transactional` commit mode's window. Outputs published on behalf of a delivery (core's
 * publish cause: replies, `ctx.out`, retry copies, dead letters) are staged here; settles move the
 * partition's watermark as under `tracked`, but the position is not stored: every commit interval
 * one Kafka transaction produces the staged outputs of the deliveries below the new positions and
 * commits those positions for the group (sendOffsetsToTransaction). So an input counts as consumed
 * exactly when its outputs are visible. Outputs of deliveries above an open one wait for a later
 * window: committing them now would repeat them when the open one's failure replays the partition.
 * A failed transaction aborts (nothing of it is visible), and the partitions go back to the last
 * committed positions, so the window's inputs are handled again and produce their outputs again.
 */
export class TransactionWindow {
  readonly #owner: WindowOwner;
  readonly #line: TransactionLine;
  #outputs: Output[] = [];
  /** Positions settled since the last transaction, by partition. */
  readonly #pending = new Map<string, PartitionOffset>();
  /** The positions the group has committed, as far as this member knows: where a rewind goes. */
  readonly #committed = new Map<string, PartitionOffset>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();
  #failures = 0;
  #inARow = 0;

  constructor(owner: WindowOwner, line: TransactionLine) {
    this.#owner = owner;
    this.#line = line;
  }

  /** Transactions that failed and were replayed: for diagnostics and tests. */
  get failures(): number {
    return this.#failures;
  }

  /** A partition starts (assigned, or sought) at `offset`: what a rewind returns to. */
  started(start: PartitionOffset): void {
    const key = partitionKey(start);
    this.#committed.set(key, start);
    this.#pending.delete(key);
    this.#outputs = this.#outputs.filter((o) => o.key !== key);
  }

  /** A partition is gone: nothing of it is committed or produced by this member any more. */
  forget(tp: TopicPartition): void {
    const key = partitionKey(tp);
    this.#committed.delete(key);
    this.#pending.delete(key);
    this.#outputs = this.#outputs.filter((o) => o.key !== key);
  }

  stage(cause: OutputCause, record: ProducedRecord, raw: RawMessage): void {
    // A delivery from before a rewind or a rebalance: its input is read again (here or by the
    // partition's next owner), which produces this output again.
    if (cause.book?.open !== true) return;
    this.#outputs.push({ ...cause, record, raw });
  }

  /** A delivery goes back to be handled again: what it published so far would be published twice. */
  unstage(cause: OutputCause): void {
    this.#outputs = this.#outputs.filter(
      (o) => !(o.book === cause.book && o.offset === cause.offset),
    );
  }

  /** The watermark of a partition moved to `position`. */
  settled(position: PartitionOffset): void {
    this.#pending.set(partitionKey(position), position);
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, COMMIT_INTERVAL_MS);
  }

  /** Commits what is settled now (one transaction at a time); resolves when it is done. */
  flush(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    // A failure is handled inside (abort, rewind, or failing the subscription): the chain never
    // rejects, so one bad turn cannot stop every later window.
    this.#running = this.#running.then(() => this.#commit()).catch(() => undefined);
    return this.#running;
  }

  async #commit(): Promise<void> {
    if (this.#pending.size === 0 && this.#outputs.length === 0) return;
    const positions = new Map(this.#pending);
    this.#pending.clear();
    const included: Output[] = [];
    const kept: Output[] = [];
    for (const output of this.#outputs) {
      if (output.book?.open !== true) continue;
      const to = positions.get(output.key) ?? this.#committed.get(output.key);
      if (to !== undefined && output.offset < to.offset) included.push(output);
      else kept.push(output);
    }
    this.#outputs = kept;
    if (positions.size === 0 && included.length === 0) return;
    try {
      await this.#line.commit(
        included.map((o) => o.record),
        {
          group: this.#owner.group,
          consumer: this.#owner.consumer,
          offsets: [...positions.values()],
        },
      );
    } catch (error) {
      this.#failures++;
      this.#outputs = [];
      this.#pending.clear();
      if (++this.#inARow >= FAILURES_IN_A_ROW) {
        this.#owner.failed(
          new RustStreamError(
            "broker-failure",
            `${this.#inARow} transactions in a row failed for group "${this.#owner.group}", each replayed from the last committed offsets; the last: ${(error as Error)?.message ?? String(error)} (a producer fenced by another instance with the same transactionalId fails every time: give each instance its own)`,
            { cause: error },
          ),
        );
        return;
      }
      await this.#owner.rewind(this.#committed).catch(() => undefined);
      return;
    }
    this.#inARow = 0;
    for (const output of included) this.#owner.published(output.raw);
    for (const [key, position] of positions) {
      // A partition revoked while the transaction ran is no longer this member's to rewind.
      if (this.#committed.has(key)) this.#committed.set(key, position);
    }
  }

  /** Stops the interval; what is settled is committed by a last flush, the caller's. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

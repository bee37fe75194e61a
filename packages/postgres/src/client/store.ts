import type { BacklogCounts } from "@ruststream/core";

/**
 * The most rows a backlog count reads of its queue, and of its dead letter's rows from it: a
 * scrape of a queue of millions of rows costs the same as one of this many (about 10-65 ms on
 * the server, measured in the README's Backlog) instead of a scan the server cancels at its limit.
 */
export const backlogCap = 10_000;

import type { Queryable } from "./driver.js";

/** A row as a claim hands it over. */
export interface ClaimedRow {
  readonly id: bigint;
  readonly queue: string;
  readonly payload: Uint8Array;
  readonly headerNames: readonly string[];
  readonly headerValues: readonly Uint8Array[];
  readonly partitionKey: Uint8Array | undefined;
  readonly priority: number;
  /** Claims so far, this one included. */
  readonly attempts: number;
  readonly deadSource: string | undefined;
  readonly deadReason: string | undefined;
  /** Claims it had where it came from, on a dead-lettered row. */
  readonly deadAttempts: number | undefined;
  /** Milliseconds from its run time to this claim (0 or more): how long it waited while due. */
  readonly waitedMs: number;
  /**
   * Why its headers are not headers (another writer's arrays; they are then empty), or
   * `undefined`: the delivery's `decodeError`.
   */
  readonly unreadable: Error | undefined;
}

/** A row to insert. */
export interface NewRow {
  readonly queue: string;
  readonly payload: Uint8Array;
  readonly headerNames: readonly string[];
  readonly headerValues: readonly Uint8Array[];
  readonly partitionKey: Uint8Array | undefined;
  readonly priority: number;
  readonly dedupKey: string | undefined;
  /** Claimable this long after the insert (0: at once). */
  readonly delayMs: number;
}

/** A claimed row as a settle names it: its id and the lease it was claimed under. */
export interface Held {
  readonly id: bigint;
  readonly lease: string;
}

/** A settle of one row, by kind; one statement settles a batch of one kind. */
export type Settle =
  | { readonly kind: "ack"; readonly keep: boolean }
  /** Back in its place when `delayMs` is 0 (its run time unchanged), else its run time moves. */
  | { readonly kind: "retry"; readonly delayMs: number }
  | { readonly kind: "dead-letter"; readonly to: string; readonly reason: string }
  | { readonly kind: "drop" }
  /** Back in its place, its lease cleared, its attempt still counted (a claimant gone). */
  | { readonly kind: "release" }
  /**
   * Back in its place as if the claim had never taken it: its lease cleared and the claim's
   * attempt taken back (a row given back unhandled, held behind a failed row of its key).
   */
  | { readonly kind: "unclaim" };

/** A claim: up to `max` ready rows of `queue`, leased to `lease` for `leaseMs`. */
export interface Claim {
  readonly queue: string;
  readonly max: number;
  readonly lease: string;
  readonly leaseMs: number;
  /**
   * Per-key order: a row with a partition key is claimed only while every earlier undone row of
   * its key is one of `own` (the claimant's rows still in work, under their live leases) or taken
   * by this same claim, so one claimant at a time works through a key, in order, and no other
   * takes a row of it meanwhile. A claim takes a key's head (its oldest undone row not held by the
   * claimant) when it is ready, and the ready rows right behind it, `perKey` at most, in order.
   */
  readonly keyOrder: boolean;
  /**
   * The rows the claimant still has in work, each with its lease. Rows, not leases: a claim's
   * lease is shared by every row it took, and a row of it whose settle failed (its transaction
   * lost) is no longer in work though its lease still runs, so it must hold its key back from the
   * claimant too until it is claimed again.
   */
  readonly own: readonly Held[];
  /** Rows of one key a key-ordered claim takes at most (1: only its head). */
  readonly perKey: number;
}

/**
 * What a subscription and a publisher need from the queue table: the statements, behind one
 * interface, so the in-process stand-in (`inProcess/memoryStore.ts`) answers exactly as the SQL
 * does (`client/sqlStore.ts`). Every settle is fenced by the lease: the ids answered are the rows
 * settled, and a row whose lease ended (another claim has it, or may) is left alone.
 */
export interface QueueStore {
  /** Inserts rows; with `via` (a caller's open transaction) on that connection, in that transaction. */
  insert(rows: readonly NewRow[], via?: Queryable): Promise<void>;
  claim(claim: Claim): Promise<ClaimedRow[]>;
  /** Settles rows of one kind; answers the ids settled (those whose lease still held). */
  settle(held: readonly Held[], settle: Settle): Promise<Set<bigint>>;
  /** Extends the leases; answers the ids still held. */
  extend(held: readonly Held[], leaseMs: number): Promise<Set<bigint>>;
  /**
   * Milliseconds until a row of `queue` may next become claimable (its run time, or its lease's
   * end), `0` when one is ready now, `undefined` when the queue holds no undone row.
   */
  nextDue(queue: string): Promise<number | undefined>;
  /**
   * The undone rows of `queue` by state (a lease still running: `leased`; else a run time to come:
   * `scheduled`; else `ready`, as a claim sees them) and, with `deadLetter`, the rows moved there
   * from `queue` and not redriven (`dead-lettered`): one statement. It reads at most `cap` rows of
   * `queue` and counts at most `cap` dead letters: where the three states add up to `cap`, the
   * queue holds at least that many and each state's count is a floor, the split of the rows read.
   */
  backlog(queue: string, deadLetter: string | undefined, cap: number): Promise<BacklogCounts>;
  /** Moves the dead letters in `deadLetter` back where they came from (only those from `source`). */
  redrive(deadLetter: string, source: string | undefined): Promise<number>;
  /** Deletes rows acked with `keep` more than `olderThanMs` ago; answers how many. */
  purgeDone(olderThanMs: number): Promise<number>;
  /** Deletes every row of `queue`, whatever its state (a reply inbox, at shutdown). */
  purgeQueue(queue: string): Promise<number>;
  /**
   * Calls `wake(queue)` when rows of `queue` may have been published; `lost`/`restored` when the
   * listening connection goes and comes back.
   */
  listen(events: {
    wake(queue: string): void;
    lost(reason: string): void;
    restored(): void;
  }): Promise<() => Promise<void>>;
  /**
   * Reserves up to `want` holds (`hold` below) for a claim about to be made; answers how many it
   * got. Each row in a held transaction keeps a connection of the driver's, and a claim holds all
   * its rows before it hands any over, so it must never take more rows than connections are left:
   * the rows it held would wait for the rest, and nothing would free a connection. One connection
   * is kept out of the count for the statements of claims and settles.
   */
  reserveHolds(want: number): number;
  /** Gives back reservations no `hold` used (fewer rows claimed, or a claim that failed). */
  returnHolds(count: number): void;
  /**
   * Runs `work` in a transaction holding `held`'s row (locked, fenced by its lease): a
   * transactional handler's writes and the row's settle commit together. `undefined` when the
   * lease no longer holds. Uses one reservation of `reserveHolds`, given back when the
   * transaction ends.
   */
  hold(held: Held): Promise<HeldTransaction | undefined>;
  /**
   * A subscription opened on `queue`; answers the function its end calls. The stand-in counts for
   * the test's coordinator from here; the server needs nothing.
   */
  subscribed(queue: string): () => void;
  close(): Promise<void>;
}

/** An open transaction holding one claimed row, for a transactional handler. */
export interface HeldTransaction {
  /** What the handler runs its statements on. */
  readonly tx: Queryable;
  /** Undoes the handler's statements, settles the row, and commits; answers whether it settled. */
  settle(settle: Settle, undoHandler: boolean): Promise<boolean>;
  /** Rolls everything back (the row stays leased until its lease ends). */
  abandon(): Promise<void>;
}

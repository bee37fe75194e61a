import { type BacklogCounts, type Clock, type ClockTimer, systemClock } from "@ruststream/core";
import { type Coordinator, noCoordinator } from "@ruststream/core/broker";
import type { Claim, ClaimedRow, Held, NewRow, Settle } from "../client/store.js";
import { claimPick } from "./claimPick.js";

/** A row of the stand-in's table: the columns of `schema.ts`, in memory. */
interface MemoryRow {
  readonly id: bigint;
  queue: string;
  readonly payload: Uint8Array;
  readonly headerNames: readonly string[];
  readonly headerValues: readonly Uint8Array[];
  readonly partitionKey: Uint8Array | undefined;
  readonly priority: number;
  dedupKey: string | undefined;
  runAt: number;
  attempts: number;
  lease: string | undefined;
  lockedUntil: number | undefined;
  doneAt: number | undefined;
  deadSource: string | undefined;
  deadReason: string | undefined;
  deadAttempts: number | undefined;
  /** Counted for the test's coordinator as available to a subscription. */
  counted: boolean;
  /** The timer that counts a delayed row when it falls due. */
  due: ClockTimer | undefined;
}

export type WakeEvents = {
  wake(queue: string): void;
  lost(reason: string): void;
  restored(): void;
};

/**
 * The in-process stand-in of the queue table, for `TestApp`: the statements of `sqlStore.ts`
 * answered the same way over rows in memory, with time from the test's clock. One per broker
 * object (its "server"), shared by every in-process connection of it. It also counts for the
 * test's coordinator: a row is counted once it is ready and its queue has a subscription, released
 * when it is settled for good, when a delayed retry takes it away until due, and when the last
 * subscription of its queue leaves.
 */
export class MemoryServer {
  readonly #rows = new Map<string, Map<bigint, MemoryRow>>();
  readonly #subscribed = new Map<string, number>();
  readonly #listeners = new Set<WakeEvents>();
  #nextId = 1n;
  #clock: Clock = systemClock;
  #coordinator: Coordinator = noCoordinator;

  /** The clock and coordinator of the test connecting now (one test drives a server at a time). */
  attach(clock: Clock, coordinator: Coordinator): void {
    this.#clock = clock;
    this.#coordinator = coordinator;
  }

  get clock(): Clock {
    return this.#clock;
  }

  /** Inserts at once (an injection is synchronous); the same rules as the SQL insert. */
  insertNow(rows: readonly NewRow[]): void {
    const now = this.#clock.now();
    const woken = new Set<string>();
    for (const row of rows) {
      const queue = this.#queue(row.queue);
      if (row.dedupKey !== undefined) {
        const taken = [...queue.values()].some(
          (r) => r.doneAt === undefined && r.dedupKey === row.dedupKey,
        );
        if (taken) continue;
      }
      const added: MemoryRow = {
        id: this.#nextId++,
        queue: row.queue,
        payload: row.payload,
        headerNames: row.headerNames,
        headerValues: row.headerValues,
        partitionKey: row.partitionKey,
        priority: row.priority,
        dedupKey: row.dedupKey,
        runAt: now + row.delayMs,
        attempts: 0,
        lease: undefined,
        lockedUntil: undefined,
        doneAt: undefined,
        deadSource: undefined,
        deadReason: undefined,
        deadAttempts: undefined,
        counted: false,
        due: undefined,
      };
      queue.set(added.id, added);
      this.#countWhenDue(added);
      woken.add(row.queue);
    }
    for (const queue of woken) this.#wake(queue);
  }

  claim(claim: Claim): ClaimedRow[] {
    const now = this.#clock.now();
    const undone = [...this.#queue(claim.queue).values()].filter((r) => r.doneAt === undefined);
    const ready = claimPick(undone, claim, now);
    for (const r of ready) {
      r.attempts += 1;
      r.lease = claim.lease;
      r.lockedUntil = now + claim.leaseMs;
    }
    return ready.map((r) => ({
      id: r.id,
      queue: r.queue,
      payload: r.payload,
      headerNames: r.headerNames,
      headerValues: r.headerValues,
      partitionKey: r.partitionKey,
      priority: r.priority,
      attempts: r.attempts,
      deadSource: r.deadSource,
      deadReason: r.deadReason,
      deadAttempts: r.deadAttempts,
      waitedMs: Math.max(0, now - r.runAt),
      // The stand-in holds only rows this package wrote.
      unreadable: undefined,
    }));
  }

  settle(held: readonly Held[], settle: Settle): Set<bigint> {
    const now = this.#clock.now();
    const settled = new Set<bigint>();
    const woken = new Set<string>();
    for (const h of held) {
      const row = this.#held(h);
      if (row === undefined) continue;
      settled.add(row.id);
      const queue = this.#queue(row.queue);
      switch (settle.kind) {
        case "drop":
        case "ack":
          if (settle.kind === "ack" && settle.keep) {
            row.doneAt = now;
            row.lease = undefined;
            row.lockedUntil = undefined;
          } else {
            queue.delete(row.id);
          }
          this.#uncount(row);
          break;
        case "retry":
          // At once: back in its place (its run time unchanged); later: its run time moves.
          if (settle.delayMs > 0) row.runAt = now + settle.delayMs;
          row.lease = undefined;
          row.lockedUntil = undefined;
          // A delayed retry leaves the test's count until due; one at once stays counted.
          if (settle.delayMs > 0) {
            this.#uncount(row);
            this.#countWhenDue(row);
          }
          woken.add(row.queue);
          break;
        case "dead-letter":
          this.#uncount(row);
          queue.delete(row.id);
          row.deadSource = row.queue;
          row.deadReason = settle.reason;
          row.deadAttempts = row.attempts;
          row.queue = settle.to;
          row.attempts = 0;
          row.runAt = now;
          row.dedupKey = undefined;
          row.lease = undefined;
          row.lockedUntil = undefined;
          this.#queue(settle.to).set(row.id, row);
          this.#count(row);
          woken.add(settle.to);
          break;
        case "release":
        case "unclaim":
          if (settle.kind === "unclaim") row.attempts = Math.max(0, row.attempts - 1);
          row.lease = undefined;
          row.lockedUntil = undefined;
          woken.add(row.queue);
          break;
      }
    }
    for (const queue of woken) this.#wake(queue);
    return settled;
  }

  extend(held: readonly Held[], leaseMs: number): Set<bigint> {
    const now = this.#clock.now();
    const kept = new Set<bigint>();
    for (const h of held) {
      const row = this.#held(h);
      if (row === undefined) continue;
      row.lockedUntil = now + leaseMs;
      kept.add(row.id);
    }
    return kept;
  }

  nextDue(queue: string): number | undefined {
    const now = this.#clock.now();
    let next: number | undefined;
    for (const r of this.#queue(queue).values()) {
      if (r.doneAt !== undefined) continue;
      const at = Math.max(r.runAt, r.lockedUntil ?? r.runAt);
      if (next === undefined || at < next) next = at;
    }
    return next === undefined ? undefined : Math.max(0, Math.ceil(next - now));
  }

  /**
   * The SQL backlog statement's counts, over the rows in memory at the test clock's time: at most
   * `cap` of the queue's undone rows read (the first in the map's order, where the server's are
   * the first its scan finds), and at most `cap` dead letters counted.
   */
  backlog(queue: string, deadLetter: string | undefined, cap: number): BacklogCounts {
    const now = this.#clock.now();
    let ready = 0;
    let scheduled = 0;
    let leased = 0;
    for (const r of this.#queue(queue).values()) {
      if (ready + scheduled + leased === cap) break;
      if (r.doneAt !== undefined) continue;
      if (r.lockedUntil !== undefined && r.lockedUntil > now) leased++;
      else if (r.runAt > now) scheduled++;
      else ready++;
    }
    if (deadLetter === undefined) return { ready, scheduled, leased };
    let dead = 0;
    for (const r of this.#queue(deadLetter).values()) {
      if (dead === cap) break;
      if (r.doneAt === undefined && r.deadSource === queue) dead++;
    }
    return { ready, scheduled, leased, "dead-lettered": dead };
  }

  redrive(deadLetter: string, source: string | undefined): number {
    const now = this.#clock.now();
    const dead = this.#queue(deadLetter);
    const woken = new Set<string>();
    let moved = 0;
    for (const row of [...dead.values()]) {
      if (row.deadSource === undefined || (source !== undefined && row.deadSource !== source)) {
        continue;
      }
      if (row.lockedUntil !== undefined && row.lockedUntil > now) continue;
      this.#uncount(row);
      dead.delete(row.id);
      row.queue = row.deadSource;
      row.deadSource = undefined;
      row.deadReason = undefined;
      row.deadAttempts = undefined;
      row.attempts = 0;
      row.runAt = now;
      row.lease = undefined;
      row.lockedUntil = undefined;
      this.#queue(row.queue).set(row.id, row);
      this.#count(row);
      woken.add(row.queue);
      moved += 1;
    }
    for (const queue of woken) this.#wake(queue);
    return moved;
  }

  purgeDone(olderThanMs: number): number {
    const before = this.#clock.now() - olderThanMs;
    let purged = 0;
    for (const queue of this.#rows.values()) {
      for (const row of [...queue.values()]) {
        if (row.doneAt !== undefined && row.doneAt < before) {
          queue.delete(row.id);
          purged += 1;
        }
      }
    }
    return purged;
  }

  purgeQueue(queue: string): number {
    const rows = this.#rows.get(queue);
    if (rows === undefined) return 0;
    for (const row of rows.values()) this.#uncount(row);
    this.#rows.delete(queue);
    return rows.size;
  }

  listen(events: WakeEvents): () => void {
    this.#listeners.add(events);
    return () => this.#listeners.delete(events);
  }

  /** A subscription opened on `queue`: its ready rows are counted from now on. */
  subscribed(queue: string): () => void {
    this.#subscribed.set(queue, (this.#subscribed.get(queue) ?? 0) + 1);
    for (const row of this.#queue(queue).values()) this.#count(row);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const count = (this.#subscribed.get(queue) ?? 1) - 1;
      if (count > 0) {
        this.#subscribed.set(queue, count);
        return;
      }
      this.#subscribed.delete(queue);
      // Nobody reads the queue any more: what it holds is no reaction the test waits for.
      for (const row of this.#queue(queue).values()) this.#uncount(row);
    };
  }

  /** Whether `held`'s lease still holds its row. */
  holds(held: Held): boolean {
    return this.#held(held) !== undefined;
  }

  /** Every row of a queue, for tests of the stand-in itself. */
  rowsOf(queue: string): readonly Readonly<MemoryRow>[] {
    return [...this.#queue(queue).values()];
  }

  #held(h: Held): MemoryRow | undefined {
    for (const queue of this.#rows.values()) {
      const row = queue.get(h.id);
      if (row !== undefined) return row.lease === h.lease ? row : undefined;
    }
    return undefined;
  }

  #queue(name: string): Map<bigint, MemoryRow> {
    let queue = this.#rows.get(name);
    if (queue === undefined) {
      queue = new Map();
      this.#rows.set(name, queue);
    }
    return queue;
  }

  #count(row: MemoryRow): void {
    if (row.counted || row.doneAt !== undefined || !this.#subscribed.has(row.queue)) return;
    if (row.runAt > this.#clock.now()) return;
    row.counted = true;
    this.#coordinator.enqueued();
  }

  #uncount(row: MemoryRow): void {
    row.due?.cancel();
    row.due = undefined;
    if (!row.counted) return;
    row.counted = false;
    this.#coordinator.consumed();
  }

  /** Counts the row now if it is ready, else when it falls due (and wakes its readers then). */
  #countWhenDue(row: MemoryRow): void {
    const wait = row.runAt - this.#clock.now();
    if (wait <= 0) {
      this.#count(row);
      return;
    }
    row.due = this.#clock.setTimer(wait, () => {
      row.due = undefined;
      this.#count(row);
      this.#wake(row.queue);
    });
  }

  #wake(queue: string): void {
    for (const listener of [...this.#listeners]) listener.wake(queue);
  }
}

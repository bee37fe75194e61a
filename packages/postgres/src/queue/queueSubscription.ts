import { randomUUID } from "node:crypto";
import {
  type BacklogCounts,
  type Clock,
  type ClockTimer,
  type Delivery,
  RustStreamError,
} from "@ruststream/core";
import {
  backlogMark,
  type HostedSubscription,
  type LinkChange,
  movesMark,
  PullSubscription,
  type ReportsBacklog,
  type ReportsMoves,
  type ReportsWaits,
  type SubscriptionHost,
  waitsMark,
} from "@ruststream/core/broker";
import {
  backlogCap,
  type ClaimedRow,
  type Held,
  type QueueStore,
  type Settle,
} from "../client/store.js";
import { isTransient, reasonOf } from "../client/transient.js";
import type { PostgresQueue } from "../sources.js";
import { behindError, type KeyedRow, KeyFaults, noRows } from "./keyFaults.js";
import { PostgresQueueDelivery, type QueueDeliveryOwner, type Verb } from "./queueDelivery.js";
import { SettleBatch } from "./settleBatch.js";

/** What a queue subscription needs from its connection: no more, so it never imports it. */
export interface QueueHost extends SubscriptionHost {
  readonly store: QueueStore;
  readonly clock: Clock;
  /** Calls `wake` whenever rows of `queue` may be ready; answers the function that stops it. */
  wakes(queue: string, wake: () => void): () => void;
  /** A link's state (the subscription's statements reaching the server, or not). */
  reportLink(link: object, change: LinkChange): void;
  forgetLink(link: object): void;
}

const none: readonly PostgresQueueDelivery[] = [];

/** The rows of this queue among `batch`, by id. */
function rowsOf(batch: readonly Delivery[]): ReadonlySet<bigint> {
  const ids = new Set<bigint>();
  for (const d of batch) if (d instanceof PostgresQueueDelivery) ids.add(d.held.id);
  return ids;
}
/** The first and the longest wait before a claim is tried again after the server failed it. */
const retryFirstMs = 100;
const retryMaxMs = 5000;
/** The shortest wait when rows are due but none could be claimed (locked, or behind their key). */
const busyFirstMs = 25;
/** The kept done rows are swept at most this often. */
const purgeEveryMs = 60_000;

/**
 * A subscription to a queue: a pull claims up to `claim` ready rows under a new lease (one
 * statement), renews the leases of the rows in work every third of the lease, and settles in
 * batches (one statement per kind). With nothing ready it waits for a wake-up (a publish's NOTIFY,
 * a local settle), the next due time, or the poll. A row claimed more often than the declared cap
 * moves to the dead letter without being handed over.
 */
export class PostgresQueueSubscription
  extends PullSubscription<PostgresQueueDelivery>
  implements QueueDeliveryOwner, HostedSubscription, ReportsMoves, ReportsBacklog, ReportsWaits
{
  readonly [movesMark] = true as const;
  readonly [backlogMark] = true as const;
  readonly [waitsMark] = true as const;
  readonly name: string;
  readonly #host: QueueHost;
  readonly #source: PostgresQueue;
  /** Handed out (or claimed for a pull) and not settled: their leases are renewed. */
  readonly #held = new Map<bigint, PostgresQueueDelivery>();
  /** With `transactional` and `keyOrder`: the held rows a failed settle of their key holds back. */
  readonly #keyFaults: KeyFaults | undefined;
  readonly #batch: SettleBatch;
  readonly #stopWakes: () => void;
  readonly #leaveStore: () => void;
  #moved: ((moved: Delivery, destination: string, reason: string) => void) | undefined;
  #claimed: (() => void) | undefined;
  #waited: ((waitedMs: number) => void) | undefined;
  /** A wake-up came since the last claim began: claim again before waiting. */
  #woken = false;
  #wake: (() => void) | undefined;
  #renewal: ClockTimer | undefined;
  #lastPurge = Number.NEGATIVE_INFINITY;
  /** The claim under way, if any, until what it took is handed out or given back. */
  #claiming: Promise<void> = Promise.resolve();
  /** Rows being given back unhandled (`handOver`), which a surrender waits for. */
  #givingBack: Promise<void> = Promise.resolve();

  constructor(host: QueueHost, source: PostgresQueue) {
    super();
    this.#host = host;
    this.#source = source;
    this.name = source.name;
    this.#keyFaults = source.transactional && source.keyOrder ? new KeyFaults() : undefined;
    this.#batch = new SettleBatch(host.store, () => this.#wakeUp());
    this.#stopWakes = host.wakes(source.name, () => this.#wakeUp());
    this.#leaveStore = host.store.subscribed(source.name);
  }

  onMoved(listener: (moved: Delivery, destination: string, reason: string) => void): void {
    this.#moved = listener;
  }

  /** Hears each row handed over, with its wait from its run time to its claim (the claim's answer). */
  onWaited(listener: (waitedMs: number) => void): void {
    this.#waited = listener;
  }

  /**
   * The queue's rows by state, and its dead letter's rows from it where it declares one: one
   * statement on the pool, asked when a metrics scrape asks (`backlog` in the README's Metrics),
   * reading at most `backlogCap` rows of each (a sum at the cap is a floor).
   */
  backlog(): Promise<BacklogCounts> {
    return this.#host.store.backlog(this.name, this.#source.retry?.deadLetter, backlogCap);
  }

  /**
   * Calls `listener` after each claim the server answered, with rows or none: an outbox relay
   * hears there that its claims work again after one failed, without waiting for a row.
   */
  onClaimed(listener: () => void): void {
    this.#claimed = listener;
  }

  protected async pull(max: number): Promise<readonly PostgresQueueDelivery[]> {
    let failures = 0;
    let busy = 0;
    for (;;) {
      const revoked = this.revokedWith;
      if (revoked !== undefined) throw revoked;
      if (this.closed) return none;
      this.#woken = false;
      let deliveries: readonly PostgresQueueDelivery[];
      try {
        this.#keyFaults?.claimBegins();
        const claiming = this.#claimOnce(Math.min(max, this.#source.claim));
        this.#claiming = claiming.then(
          () => undefined,
          () => undefined,
        );
        deliveries = await claiming;
        if (failures > 0) this.#host.reportLink(this, { state: "connected" });
        failures = 0;
        this.#claimed?.();
      } catch (error) {
        if (this.closed) return none;
        if (!isTransient(error)) {
          throw new RustStreamError(
            "broker-failure",
            `claiming rows of "${this.name}" failed: ${reasonOf(error)}`,
            { cause: error },
          );
        }
        // The server is away (a restart, a lost socket): try again, saying so meanwhile.
        this.#host.reportLink(this, { state: "reconnecting", reason: reasonOf(error) });
        await this.#waitFor(Math.min(retryFirstMs * 2 ** failures, retryMaxMs));
        failures += 1;
        continue;
      }
      if (this.revokedWith !== undefined) throw this.revokedWith;
      if (this.closed) return none;
      if (deliveries.length > 0) {
        const waited = this.#waited;
        if (waited !== undefined) for (const d of deliveries) waited(d.waitedMs);
        this.#keyFaults?.claimed(deliveries);
        for (const delivery of deliveries) this.#held.set(delivery.held.id, delivery);
        this.#scheduleRenewal();
        return deliveries;
      }
      if (this.#woken) continue;
      const due = await this.#host.store.nextDue(this.name).catch(() => undefined);
      if (this.#woken) continue;
      await this.#purgeDone();
      // Rows due now that no claim took are locked or behind their key: look again soon, then
      // less often, since their settle elsewhere sends no wake-up.
      const poll = this.#source.pollMs;
      const wait =
        due === undefined
          ? poll
          : due > 0
            ? Math.min(due, poll)
            : Math.min(busyFirstMs * 2 ** busy++, poll);
      if (due !== 0) busy = 0;
      await this.#waitFor(wait);
    }
  }

  async close(): Promise<void> {
    if (!this.markClosed()) return;
    this.#host.forget(this);
    this.#stopWakes();
    this.#host.forgetLink(this);
    // The connection forgets it, so no shutdown surrenders it later: it leaves the store here (the
    // in-process stand-in stops counting the queue's rows for it; a new reader counts them again).
    this.#leaveStore();
    this.#wakeUp();
    // Deliveries handed out stay valid: their leases are renewed until they are settled.
  }

  // HostedSubscription

  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#wakeUp();
  }

  /** Gives back every row it holds (leases released, transactions rolled back); answers how many. */
  async surrender(): Promise<number> {
    this.markClosed();
    this.#stopWakes();
    this.#host.forgetLink(this);
    // A claim under way when the subscription was revoked gives back what it took itself: wait for
    // it, so nothing it took stays leased past the connection.
    await this.#claiming;
    await this.#givingBack;
    const held = [...this.#held.values()].filter((d) => !d.settled);
    this.#held.clear();
    this.#keyFaults?.clear();
    this.#stopRenewal();
    await this.#batch.drain();
    await this.#release(held);
    this.#leaveStore();
    return held.length;
  }

  // QueueDeliveryOwner

  assertOpen(): void {
    this.#host.assertOpen();
  }

  async settle(delivery: PostgresQueueDelivery, verb: Verb): Promise<"ok"> {
    const settle = this.#statementOf(delivery, verb);
    // Registered at once (before any await), so settles of one key take their turns in call order.
    const turn = delivery.transaction === undefined ? undefined : this.#keyFaults?.turn(delivery);
    const ended = await turn;
    let settled: "settled" | "lost" | "behind" = "lost";
    try {
      if (delivery.transaction === undefined) {
        settled = (await this.#batch.settle(delivery.held, settle)) ? "settled" : "lost";
      } else if (verb.kind === "ack" && this.#keyFaults?.isBehind(delivery)) {
        // An earlier row of its key failed its settle: undone and given back, to come after it.
        const given = await delivery.transaction.settle({ kind: "release" }, true);
        settled = given ? "behind" : "lost";
      } else {
        // A handler that failed is undone; an ack commits its writes with the settle.
        const done = await delivery.transaction.settle(settle, verb.kind !== "ack");
        settled = done ? "settled" : "lost";
      }
    } finally {
      // Forgotten even when the settle failed (a connection lost under it): the row comes back
      // when its lease ends, and a delivery kept here would be renewed for nothing ever after.
      this.#held.delete(delivery.held.id);
      if (this.#held.size === 0) this.#stopRenewal();
      // Not settled: the rows of its key behind it wait for it.
      if (settled !== "settled") this.#keyFaults?.failed(delivery, this.#held.values());
      this.#keyFaults?.forget(delivery);
      ended?.();
      if (delivery.transaction !== undefined) this.#wakeUp();
    }
    if (settled === "behind") throw behindError(delivery.held.id, this.name);
    if (settled === "lost") {
      throw new RustStreamError(
        "broker-failure",
        `the lease on row ${delivery.held.id} of "${this.name}" ended before its settle (a renewal failed, or the server was away longer than leaseMs ${this.#source.leaseMs}): the row goes to the next claim`,
      );
    }
    return "ok";
  }

  /**
   * Before `delivery`'s handler runs (the runtime asks): on a transactional `keyOrder` queue, it
   * waits until the earlier rows of its key handed over before it are settled (a reply's handler
   * settles after the reply's publish, while its lane goes on; workers without a key run a key's
   * rows side by side), then goes back unhandled when one of them failed, so no handler of a key's
   * later row runs before the earlier row is handled again, whatever it does outside its
   * transaction. The rows of `batch` (a batch handler's, settled after it) are not waited for: the
   * runtime asks each in order, so a row held back goes back, and the rows of its key behind it in
   * the batch, held back by the same fault, with it. `undefined`: at once.
   */
  handOver(
    delivery: PostgresQueueDelivery,
    batch: readonly Delivery[] | undefined,
  ): Promise<boolean> | undefined {
    const faults = this.#keyFaults;
    if (faults === undefined || delivery.partitionKey === undefined) return undefined;
    const together = batch === undefined ? noRows : rowsOf(batch);
    const waits = faults.handing(delivery, together);
    if (!faults.isBehind(delivery) && !waits) return undefined;
    const row = { id: delivery.held.id, partitionKey: delivery.partitionKey };
    return this.#handOverInTurn(delivery, row, together, faults);
  }

  async #handOverInTurn(
    delivery: PostgresQueueDelivery,
    row: KeyedRow,
    together: ReadonlySet<bigint>,
    faults: KeyFaults,
  ): Promise<boolean> {
    await faults.handedBefore(row, together);
    // Ended meanwhile: not handled, and given back with what the subscription holds.
    if (this.closed) return false;
    if (!faults.isBehind(delivery)) return true;
    this.#held.delete(delivery.held.id);
    if (this.#held.size === 0) this.#stopRenewal();
    faults.forget(delivery);
    const given = this.#giveBack(delivery);
    this.#givingBack = Promise.all([this.#givingBack, given]).then(() => undefined);
    await given;
    return false;
  }

  /**
   * Gives back a row never handled, as if its claim had not taken it (`unclaim`: the claim's
   * attempt taken back), in its own transaction: the next claim takes it in its key's order. One
   * whose give-back fails comes back when its lease ends, its attempt counted.
   */
  async #giveBack(delivery: PostgresQueueDelivery): Promise<void> {
    await delivery.transaction?.settle({ kind: "unclaim" }, true).catch(() => false);
    this.#wakeUp();
  }

  /**
   * Where settling `delivery` with `verb` moves it: the dead letter and the reason its row will
   * carry, or `undefined` where it stays in its queue. For a caller reporting the move once its
   * settle succeeded, as the outbox relay does.
   */
  deadLetterOf(
    delivery: PostgresQueueDelivery,
    verb: Verb,
  ): { readonly to: string; readonly reason: string } | undefined {
    const settle = this.#statementOf(delivery, verb);
    return settle.kind === "dead-letter" ? { to: settle.to, reason: settle.reason } : undefined;
  }

  #statementOf(delivery: PostgresQueueDelivery, verb: Verb): Settle {
    switch (verb.kind) {
      case "ack":
        return { kind: "ack", keep: this.#source.ack === "keep" };
      case "requeue": {
        // The cap's last delivery failed: the broker moves it, as it promised at subscribe.
        const { maxAttempts, deadLetter } = this.#source.retry ?? {};
        if (
          maxAttempts !== undefined &&
          deadLetter !== undefined &&
          delivery.redeliveryCount >= maxAttempts
        ) {
          return { kind: "dead-letter", to: deadLetter, reason: "max-attempts" };
        }
        return { kind: "retry", delayMs: verb.delayMs };
      }
      case "drop": {
        const deadLetter = this.#source.retry?.deadLetter;
        if (deadLetter === undefined) return { kind: "drop" };
        const cap = this.#source.retry?.maxAttempts ?? Number.POSITIVE_INFINITY;
        const reason = delivery.redeliveryCount >= cap ? "max-attempts" : "rejected";
        return { kind: "dead-letter", to: deadLetter, reason };
      }
    }
  }

  /** One claim; what it took as the subscription ended goes back at once, never handed out. */
  async #claimOnce(max: number): Promise<readonly PostgresQueueDelivery[]> {
    const deliveries = await this.#claim(max);
    if (this.revokedWith === undefined && !this.closed) return deliveries;
    await this.#release(deliveries).catch(() => undefined);
    return none;
  }

  /**
   * One claim: the rows, each under the new lease (and in a transaction of its own when the
   * subscription is transactional); rows past the declared cap are moved to the dead letter.
   */
  async #claim(want: number): Promise<readonly PostgresQueueDelivery[]> {
    const source = this.#source;
    const store = this.#host.store;
    const lease = randomUUID();
    // A transactional claim takes no more rows than it can hold each in a transaction of its own
    // at once: none while every connection holds a row in work (settles free them, and wake this).
    const max = source.transactional ? store.reserveHolds(want) : want;
    if (max === 0) return none;
    let reserved = source.transactional ? max : 0;
    try {
      return await this.#claimRows(max, lease, () => {
        reserved -= 1;
      });
    } finally {
      if (reserved > 0) store.returnHolds(reserved);
    }
  }

  /** The claim's statement, then the dead letter of rows past the cap, then the holds. */
  async #claimRows(
    max: number,
    lease: string,
    holding: () => void,
  ): Promise<readonly PostgresQueueDelivery[]> {
    const source = this.#source;
    const store = this.#host.store;
    const rows = await store.claim({
      queue: this.name,
      max,
      lease,
      leaseMs: source.leaseMs,
      keyOrder: source.keyOrder,
      perKey: source.perKey,
      own: [...this.#held.values()].filter((d) => !d.settled).map((d) => d.held),
    });
    if (rows.length === 0) return none;
    const cap = source.retry?.maxAttempts;
    const deadLetter = source.retry?.deadLetter;
    const kept: ClaimedRow[] = [];
    const spent: ClaimedRow[] = [];
    for (const row of rows) {
      if (cap !== undefined && deadLetter !== undefined && row.attempts > cap) spent.push(row);
      else kept.push(row);
    }
    if (spent.length > 0 && deadLetter !== undefined)
      await this.#moveSpent(spent, lease, deadLetter);
    if (!source.transactional) {
      return kept.map((row) => new PostgresQueueDelivery(this, row, lease, undefined));
    }
    const deliveries: PostgresQueueDelivery[] = [];
    try {
      for (const row of kept) {
        holding();
        const held = await store.hold({ id: row.id, lease });
        if (held !== undefined) {
          const transaction = this.#keyFaults?.gate(row, this.name, held) ?? held;
          deliveries.push(new PostgresQueueDelivery(this, row, lease, transaction));
        }
      }
    } catch (error) {
      await this.#release(deliveries).catch(() => undefined);
      throw error;
    }
    return deliveries;
  }

  /**
   * Rows claimed past the cap (their worker died each time, before any settle): moved to the dead
   * letter unseen, and reported as moved once the move is done.
   */
  async #moveSpent(rows: readonly ClaimedRow[], lease: string, deadLetter: string): Promise<void> {
    const held = rows.map((row): Held => ({ id: row.id, lease }));
    const moved = await this.#host.store.settle(held, {
      kind: "dead-letter",
      to: deadLetter,
      reason: "max-attempts",
    });
    for (const row of rows) {
      if (!moved.has(row.id)) continue;
      this.#moved?.(
        new PostgresQueueDelivery(this, row, lease, undefined),
        deadLetter,
        "max-attempts",
      );
    }
  }

  /** Puts rows back as they were (their attempt stays counted), rolling back their transactions. */
  async #release(deliveries: readonly PostgresQueueDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await Promise.all(deliveries.map((d) => d.transaction?.abandon()));
    await this.#host.store.settle(
      deliveries.map((d) => d.held),
      { kind: "release" },
    );
  }

  #scheduleRenewal(): void {
    if (this.#renewal !== undefined || this.#source.transactional) return;
    // A transactional claim's row is locked by its transaction: no other claim takes it, so its
    // lease needs no renewal (it counts only once the transaction is gone, after a crash).
    const every = Math.max(1, Math.floor(this.#source.leaseMs / 3));
    this.#renewal = this.#host.clock.setTimer(every, () => {
      this.#renewal = undefined;
      void this.#renew();
    });
  }

  async #renew(): Promise<void> {
    const held = [...this.#held.values()].filter((d) => !d.settled).map((d) => d.held);
    if (held.length === 0) return;
    try {
      await this.#host.store.extend(held, this.#source.leaseMs);
    } catch {
      // Tried again at the next turn; a lease that ends meanwhile fails its settle, saying so.
    }
    if (this.#held.size > 0) this.#scheduleRenewal();
  }

  #stopRenewal(): void {
    this.#renewal?.cancel();
    this.#renewal = undefined;
  }

  async #purgeDone(): Promise<void> {
    if (this.#source.ack !== "keep") return;
    const now = this.#host.clock.now();
    if (now - this.#lastPurge < purgeEveryMs) return;
    this.#lastPurge = now;
    await this.#host.store.purgeDone(this.#source.retainMs).catch(() => undefined);
  }

  /** Waits `ms` on the clock, or less when woken or closed. */
  #waitFor(ms: number): Promise<void> {
    if (this.#woken || this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.#host.clock.setTimer(ms, () => this.#wakeUp());
      this.#wake = () => {
        timer.cancel();
        resolve();
      };
    });
  }

  #wakeUp(): void {
    this.#woken = true;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { backlogCap, type Held, type NewRow, type QueueStore } from "../src/client/store.js";

// The statements of the queue, checked one by one on a store: run on the SQL store against the
// real server and on the in-process stand-in, so both answer alike (store.sql.test.ts,
// store.memory.test.ts).

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

export function row(queue: string, payload: string, extra: Partial<NewRow> = {}): NewRow {
  return {
    queue,
    payload: bytes(payload),
    headerNames: ["h"],
    headerValues: [new Uint8Array([0, 255])],
    partitionKey: undefined,
    priority: 0,
    dedupKey: undefined,
    delayMs: 0,
    ...extra,
  };
}

export interface StoreFixture {
  /** A store on the shared table (or server). */
  store(): QueueStore;
  /** Moves the store's clock by `ms` (the real server's by waiting). */
  pass(ms: number): Promise<void>;
}

const lease = () => randomUUID();
const unique = (what: string) => `${what}-${randomUUID().slice(0, 8)}`;

async function claimAll(
  store: QueueStore,
  queue: string,
  max = 10,
  keyOrder = false,
  own: readonly Held[] = [],
  perKey = max,
) {
  const held = lease();
  const rows = await store.claim({
    queue,
    max,
    lease: held,
    leaseMs: 30_000,
    keyOrder,
    own,
    perKey,
  });
  return { rows, held: rows.map((r): Held => ({ id: r.id, lease: held })) };
}

export function storeContract(f: StoreFixture): void {
  it("a claim hands rows over by priority, then in order, counts the attempt, and leases them", async () => {
    const s = f.store();
    const q = unique("order");
    await s.insert([row(q, "a"), row(q, "b"), row(q, "urgent", { priority: 5 }), row(q, "c")]);
    const first = await claimAll(s, q, 3);
    expect(first.rows.map((r) => text(r.payload))).toEqual(["urgent", "a", "b"]);
    expect(first.rows.map((r) => r.attempts)).toEqual([1, 1, 1]);
    expect([...first.rows[0]!.headerValues[0]!]).toEqual([0, 255]);
    // Leased: another claim skips them.
    const second = await claimAll(s, q);
    expect(second.rows.map((r) => text(r.payload))).toEqual(["c"]);
    expect((await claimAll(s, q)).rows).toEqual([]);
  });

  it("settles are fenced by the lease: a stale lease settles nothing", async () => {
    const s = f.store();
    const q = unique("fence");
    await s.insert([row(q, "x")]);
    const { rows, held } = await claimAll(s, q);
    const stale = [{ id: rows[0]!.id, lease: lease() }];
    expect((await s.settle(stale, { kind: "ack", keep: false })).size).toBe(0);
    expect([...(await s.extend(stale, 1000))]).toEqual([]);
    expect([...(await s.extend(held, 30_000))]).toEqual([rows[0]!.id]);
    expect([...(await s.settle(held, { kind: "ack", keep: false }))]).toEqual([rows[0]!.id]);
    // Gone: a second settle under the same lease finds nothing.
    expect((await s.settle(held, { kind: "ack", keep: false })).size).toBe(0);
    expect(await s.nextDue(q)).toBeUndefined();
  });

  it("a retry keeps the count (at once in its place, later by its delay); a release gives the row back as it was; an unclaim without the claim's attempt", async () => {
    const s = f.store();
    const q = unique("retry");
    await s.insert([row(q, "again")]);
    const first = await claimAll(s, q);
    await s.settle(first.held, { kind: "retry", delayMs: 0 });
    const second = await claimAll(s, q);
    expect(second.rows.map((r) => r.attempts)).toEqual([2]);
    await s.settle(second.held, { kind: "release" });
    const third = await claimAll(s, q);
    expect(third.rows.map((r) => r.attempts)).toEqual([3]);
    // An unclaim takes this claim's attempt back: the next claim counts 3 again.
    expect([...(await s.settle(third.held, { kind: "unclaim" }))]).toEqual([third.rows[0]!.id]);
    const fourth = await claimAll(s, q);
    expect(fourth.rows.map((r) => r.attempts)).toEqual([3]);
    await s.settle(fourth.held, { kind: "retry", delayMs: 60_000 });
    expect((await claimAll(s, q)).rows).toEqual([]);
    const due = await s.nextDue(q);
    expect(due).toBeGreaterThan(50_000);
    expect(due).toBeLessThanOrEqual(60_000);
  });

  it("an expired lease gives the row to the next claim", async () => {
    const s = f.store();
    const q = unique("expiry");
    await s.insert([row(q, "crashed")]);
    const held = lease();
    const rows = await s.claim({
      queue: q,
      max: 1,
      lease: held,
      leaseMs: 200,
      keyOrder: false,
      own: [],
      perKey: 1,
    });
    expect(rows).toHaveLength(1);
    expect((await claimAll(s, q)).rows).toEqual([]);
    await f.pass(250);
    const again = await claimAll(s, q);
    expect(again.rows.map((r) => [text(r.payload), r.attempts])).toEqual([["crashed", 2]]);
    // The first claim's lease is over: its settle is refused.
    expect(
      (await s.settle([{ id: rows[0]!.id, lease: held }], { kind: "ack", keep: false })).size,
    ).toBe(0);
  });

  it("a dead letter moves the row with its origin, and a redrive brings it back", async () => {
    const s = f.store();
    const q = unique("source");
    const dlq = unique("dlq");
    await s.insert([row(q, "poison")]);
    const { held } = await claimAll(s, q);
    await s.settle(held, { kind: "dead-letter", to: dlq, reason: "max-attempts" });
    expect((await claimAll(s, q)).rows).toEqual([]);
    const dead = await claimAll(s, dlq);
    expect(
      dead.rows.map((r) => [
        text(r.payload),
        r.deadSource,
        r.deadReason,
        r.deadAttempts,
        r.attempts,
      ]),
    ).toEqual([["poison", q, "max-attempts", 1, 1]]);
    // Leased in the dead letter: a redrive leaves it until it is free.
    expect(await s.redrive(dlq, undefined)).toBe(0);
    await s.settle(dead.held, { kind: "release" });
    expect(await s.redrive(dlq, unique("other"))).toBe(0);
    expect(await s.redrive(dlq, q)).toBe(1);
    const back = await claimAll(s, q);
    expect(
      back.rows.map((r) => [text(r.payload), r.deadSource, r.deadAttempts, r.attempts]),
    ).toEqual([["poison", undefined, undefined, 1]]);
  });

  it("a claim answers each row's wait from its run time", async () => {
    const s = f.store();
    const q = unique("waited");
    await s.insert([row(q, "due later", { delayMs: 100 })]);
    // Due 100 ms after the insert, claimed 300 ms after it: it waited 200 ms at least.
    await f.pass(300);
    const { rows } = await claimAll(s, q);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.waitedMs).toBeGreaterThanOrEqual(195);
    expect(rows[0]!.waitedMs).toBeLessThan(60_000);
  });

  it("the backlog counts a queue's rows by state, and its dead letter's rows from it", async () => {
    const s = f.store();
    const q = unique("backlog");
    const dlq = unique("backlog-dlq");
    const other = unique("backlog-other");
    expect(await s.backlog(q, dlq, backlogCap)).toEqual({
      ready: 0,
      scheduled: 0,
      leased: 0,
      "dead-lettered": 0,
    });
    await s.insert([
      ...["a", "b", "c", "d", "e", "f"].map((p) => row(q, p)),
      row(q, "later", { delayMs: 60_000 }),
      row(q, "later too", { delayMs: 60_000 }),
      // Another queue's rows, and a dead letter from it in the same dead-letter queue: not counted.
      row(other, "elsewhere"),
    ]);
    const leased = await claimAll(s, q, 2);
    const dead = await claimAll(s, q, 1);
    await s.settle(dead.held, { kind: "dead-letter", to: dlq, reason: "rejected" });
    const acked = await claimAll(s, q, 1);
    await s.settle(acked.held, { kind: "ack", keep: true });
    const foreign = await claimAll(s, other, 1);
    await s.settle(foreign.held, { kind: "dead-letter", to: dlq, reason: "rejected" });
    expect(await s.backlog(q, dlq, backlogCap)).toEqual({
      ready: 2,
      scheduled: 2,
      leased: 2,
      "dead-lettered": 1,
    });
    // Without a dead letter the state is not answered at all.
    expect(await s.backlog(q, undefined, backlogCap)).toEqual({
      ready: 2,
      scheduled: 2,
      leased: 2,
    });
    // A settled lease counts as ready again once given back.
    await s.settle(leased.held, { kind: "release" });
    expect(await s.backlog(q, dlq, backlogCap)).toMatchObject({ ready: 4, leased: 0 });
  });

  it("the backlog reads at most its cap of rows: a sum at the cap is a floor, each state's count at most its rows", async () => {
    const s = f.store();
    const q = unique("capped");
    const dlq = unique("capped-dlq");
    await s.insert([
      ...["a", "b", "c", "d", "e", "f"].map((p) => row(q, p)),
      row(q, "later", { delayMs: 60_000 }),
      row(q, "later too", { delayMs: 60_000 }),
    ]);
    const dead = await claimAll(s, q, 2);
    await s.settle(dead.held, { kind: "dead-letter", to: dlq, reason: "rejected" });
    const leased = await claimAll(s, q, 1);
    expect(leased.held).toHaveLength(1);
    // 6 undone rows (3 ready, 2 scheduled, 1 leased) and 2 dead letters, counted with a cap of 5.
    const capped = await s.backlog(q, dlq, 5);
    const { ready = -1, scheduled = -1, leased: held = -1 } = capped;
    expect(ready + scheduled + held).toBe(5);
    expect(ready).toBeGreaterThanOrEqual(0);
    expect(ready).toBeLessThanOrEqual(3);
    expect(scheduled).toBeGreaterThanOrEqual(0);
    expect(scheduled).toBeLessThanOrEqual(2);
    expect(held).toBeGreaterThanOrEqual(0);
    expect(held).toBeLessThanOrEqual(1);
    expect(capped["dead-lettered"]).toBe(2);
    expect((await s.backlog(q, dlq, 1))["dead-lettered"]).toBe(1);
    // At the exact count or above it, the counts are exact.
    expect(await s.backlog(q, dlq, 6)).toEqual({
      ready: 3,
      scheduled: 2,
      leased: 1,
      "dead-lettered": 2,
    });
  });

  it("per-key order: a claim takes a key's head and the ready rows behind it, in order; no other claimant takes the key meanwhile", async () => {
    const s = f.store();
    const q = unique("keys");
    const k1 = bytes("k1");
    const k2 = bytes("k2");
    await s.insert([
      row(q, "k1-a", { partitionKey: k1 }),
      row(q, "k1-b", { partitionKey: k1 }),
      row(q, "k2-a", { partitionKey: k2 }),
      row(q, "free"),
      row(q, "k2-b", { partitionKey: k2 }),
      // Urgent, but behind k1's head: it comes right after the rows before it in its key.
      row(q, "k1-c", { partitionKey: k1, priority: 5 }),
    ]);
    // One claim takes three rows of k1 (the old claim took one per key: k1-a, k2-a, free).
    const first = await claimAll(s, q, 4, true);
    expect(first.rows.map((r) => text(r.payload))).toEqual(["k1-a", "k1-b", "k1-c", "k2-a"]);
    // Another claimant gets nothing of a key while a row of it is in work: only the keyless row.
    const other = await claimAll(s, q, 10, true);
    expect(other.rows.map((r) => text(r.payload))).toEqual(["free"]);
    // The claimant holding k2's head takes the row behind it.
    const second = await claimAll(s, q, 10, true, first.held);
    expect(second.rows.map((r) => text(r.payload))).toEqual(["k2-b"]);
    // k1's head retried with a delay: the rows behind it, given back, wait for it, even for the
    // claimant holding k2.
    await s.settle(first.held.slice(0, 1), { kind: "retry", delayMs: 60_000 });
    await s.settle(first.held.slice(1, 3), { kind: "release" });
    const stillMine = [...first.held.slice(3), ...second.held];
    expect((await claimAll(s, q, 10, true, stillMine)).rows).toEqual([]);
    expect((await claimAll(s, q, 10, true)).rows).toEqual([]);
    await s.settle([...first.held.slice(3), ...second.held, ...other.held], {
      kind: "ack",
      keep: false,
    });
  });

  it("per-key order: a row of the claimant's claim that it no longer has in work holds its key back from it too, though the claim's lease still runs", async () => {
    const s = f.store();
    const q = unique("own");
    const k1 = bytes("k1");
    const k2 = bytes("k2");
    await s.insert([row(q, "k1-a", { partitionKey: k1 }), row(q, "k2-a", { partitionKey: k2 })]);
    const first = await claimAll(s, q, 10, true);
    expect(first.rows.map((r) => text(r.payload))).toEqual(["k1-a", "k2-a"]);
    await s.insert([row(q, "k1-b", { partitionKey: k1 }), row(q, "k2-b", { partitionKey: k2 })]);
    // k1-a's settle failed (its transaction lost): the claimant has only k2-a in work, under the
    // same lease. k1-b waits for k1-a; k2-b comes behind k2-a.
    const second = await claimAll(s, q, 10, true, first.held.slice(1));
    expect(second.rows.map((r) => text(r.payload))).toEqual(["k2-b"]);
    // Still holding both: both keys' next rows are the claimant's to take.
    await s.settle(second.held, { kind: "release" });
    const third = await claimAll(s, q, 10, true, first.held);
    expect(third.rows.map((r) => text(r.payload))).toEqual(["k1-b", "k2-b"]);
  });

  it("per-key order: a head retried at once is claimed again in its place, with the rows behind it; perKey 1 takes heads only", async () => {
    const s = f.store();
    const q = unique("heads");
    const k1 = bytes("k1");
    const k2 = bytes("k2");
    await s.insert([
      row(q, "k1-a", { partitionKey: k1 }),
      row(q, "k2-a", { partitionKey: k2 }),
      row(q, "k1-b", { partitionKey: k1 }),
      row(q, "k2-b", { partitionKey: k2 }),
      // Not due yet: it ends k2's run of ready rows.
      row(q, "k2-later", { partitionKey: k2, delayMs: 60_000 }),
      row(q, "k2-c", { partitionKey: k2 }),
    ]);
    const heads = await claimAll(s, q, 10, true, [], 1);
    expect(heads.rows.map((r) => text(r.payload))).toEqual(["k1-a", "k2-a"]);
    await s.settle(heads.held, { kind: "retry", delayMs: 0 });
    const runs = await claimAll(s, q, 10, true);
    expect(runs.rows.map((r) => [text(r.payload), r.attempts])).toEqual([
      ["k1-a", 2],
      ["k2-a", 2],
      ["k1-b", 1],
      ["k2-b", 1],
    ]);
  });

  it("a deduplication key keeps one undone row per queue and key", async () => {
    const s = f.store();
    const q = unique("dedup");
    await s.insert([row(q, "first", { dedupKey: "order-1" })]);
    await s.insert([
      row(q, "second", { dedupKey: "order-1" }),
      row(q, "other", { dedupKey: "order-2" }),
    ]);
    const { rows, held } = await claimAll(s, q);
    expect(rows.map((r) => text(r.payload))).toEqual(["first", "other"]);
    // Done and kept: the key is free again.
    await s.settle(held, { kind: "ack", keep: true });
    await s.insert([row(q, "third", { dedupKey: "order-1" })]);
    expect((await claimAll(s, q)).rows.map((r) => text(r.payload))).toEqual(["third"]);
  });

  it("a row inserted alone, with a deduplication key and without, keeps every column as a row inserted with others does", async () => {
    const s = f.store();
    const q = unique("alone");
    // A publish's row goes by a statement of its own (prepared on the pool, without the conflict
    // clause when it has no key): each column read back, against the same rows inserted together.
    const full = (payload: string, dedupKey: string | undefined): NewRow =>
      row(q, payload, {
        headerNames: ["content-type", "x"],
        headerValues: [bytes("application/octet-stream"), new Uint8Array([0, 1, 255])],
        partitionKey: bytes(`key-${payload}`),
        priority: payload.length,
        dedupKey,
      });
    await s.insert([full("plain", undefined)]);
    await s.insert([full("deduped", "d-1")]);
    await s.insert([full("again", "d-1")]);
    await s.insert([full("together", undefined), full("together-d", "d-2")]);
    const { rows } = await claimAll(s, q);
    expect(
      rows.map((r) => ({
        payload: text(r.payload),
        headers: r.headerNames.map((n, i) => `${n}=${[...r.headerValues[i]!].join(",")}`),
        key: r.partitionKey === undefined ? undefined : text(r.partitionKey),
        priority: r.priority,
      })),
    ).toEqual(
      ["together-d", "together", "deduped", "plain"].map((payload) => ({
        payload,
        headers: [`content-type=${[...bytes("application/octet-stream")].join(",")}`, "x=0,1,255"],
        key: `key-${payload}`,
        priority: payload.length,
      })),
    );
  });

  it("a delayed insert is claimable once due; kept done rows are purged after their retention", async () => {
    const s = f.store();
    const q = unique("delayed");
    await s.insert([row(q, "later", { delayMs: 300 })]);
    expect((await claimAll(s, q)).rows).toEqual([]);
    await f.pass(350);
    const { held } = await claimAll(s, q);
    expect(held).toHaveLength(1);
    await s.settle(held, { kind: "ack", keep: true });
    expect((await claimAll(s, q)).rows).toEqual([]);
    await f.pass(50);
    expect(await s.purgeDone(10)).toBeGreaterThanOrEqual(1);
    expect(await s.nextDue(q)).toBeUndefined();
  });

  it("a publish wakes the listeners with its queue", async () => {
    const s = f.store();
    const q = unique("wake");
    const woken: string[] = [];
    let heard: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      heard = resolve;
    });
    const stop = await s.listen({
      wake: (queue) => {
        woken.push(queue);
        if (queue === q) heard();
      },
      lost: () => {},
      restored: () => {},
    });
    await s.insert([row(q, "ping")]);
    await arrived;
    expect(woken).toContain(q);
    await stop();
  });
}

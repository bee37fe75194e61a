import { bytes as bytesCodec, type ConnectionChange, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectedPostgresBroker,
  PostgresBroker,
  PostgresQueue,
  transactionOf,
} from "../src/index.js";
import { waitUntil } from "./support.js";

// The transactions a queue in the service's own database gives, on the real server: a handler's
// writes and its row's ack commit together or not at all, and a publish inside the caller's
// transaction exists only if that transaction commits.

const table = "e2e_queue";
const url = () => requireEnv("POSTGRES_URL");
const broker = (extra: { applicationName?: string } = {}) =>
  new PostgresBroker({ url: url(), table, ensureSchema: true, ...extra });

let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: url() });
  await sql.connect();
});
afterAll(() => sql.end());

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const rowsOf = async (queue: string) =>
  (await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE queue = $1`, [queue])).rows[0].n;

describe("a transactional handler", () => {
  it("whose attempt fails after its write and its out publish leaves none of them; the next commits all", async () => {
    const queue = uniqueName("orders");
    const shipping = `${queue}-shipping`;
    const orders = `orders_${queue.replaceAll("-", "_")}`;
    await sql.query(`CREATE TABLE ${orders} (id text PRIMARY KEY, attempt int NOT NULL)`);
    try {
      const app = new RustStream({ name: "tx-handler", version: "1.0.0" }).broker(broker(), (b) => {
        b.subscriber(new PostgresQueue(queue, { transactional: true, pollMs: 200 }))
          .onFailure({ backoff: { initialMs: 10, maxMs: 10 } })
          .publishes({ shipping })
          .handle(async (payload, ctx) => {
            const tx = transactionOf(ctx.delivery);
            // The business write; a second one for the same order would violate the key.
            await tx.query(`INSERT INTO ${orders} (id, attempt) VALUES ($1, $2)`, [
              (payload as { id: string }).id,
              ctx.attempt,
            ]);
            // A publish caused by this delivery joins the claim's transaction.
            await ctx.out.shipping.publish({
              order: (payload as { id: string }).id,
              attempt: ctx.attempt,
            });
            if (ctx.attempt === 1) throw new Error("a business rule failed after the write");
          });
      });
      t = await TestApp.startLive(app);
      await t.publish(queue, { id: "order-1" });
      await waitUntil(15_000, "two attempts", () => t!.subscriber(queue).outcomes.length >= 2);
      await t.settle();
      // Had the first attempt's write committed, the second's insert would have failed on the key.
      expect(t.subscriber(queue).attempts).toEqual([1, 2]);
      // A thrown error retries after the backoff: the row's run time moves.
      expect(t.subscriber(queue).outcomes).toEqual(["retry-after", "ack"]);
      const written = await sql.query(`SELECT id, attempt FROM ${orders}`);
      expect(written.rows).toEqual([{ id: "order-1", attempt: 2 }]);
      expect(await rowsOf(queue)).toBe(0);
      // Only the committed attempt's shipping message exists.
      const shipped = await sql.query(
        `SELECT convert_from(payload, 'UTF8') AS body FROM ${table} WHERE queue = $1`,
        [shipping],
      );
      expect(shipped.rows.map((r) => JSON.parse(r.body))).toEqual([
        { order: "order-1", attempt: 2 },
      ]);
    } finally {
      await sql.query(`DROP TABLE ${orders}`);
    }
  });
});

describe("a transactional queue with more rows than its pool has connections", () => {
  it("holds at most the pool's size less one at once, and drains its backlog", async () => {
    const queue = uniqueName("tx-backlog");
    const poolSize = 4;
    const seed = await broker().connect();
    const publisher = await seed.defaultPublishPolicy().pair(seed);
    // A claim of 16 over a pool of 4: held all at once, its rows would wait for connections that
    // only its own unhanded rows keep.
    await publisher.transaction(async (tx) => {
      for (let i = 0; i < 40; i++) await tx.publish({ name: queue, payload: bytes(`job-${i}`) });
    });
    await seed.shutdown();
    let inWork = 0;
    let most = 0;
    const done: string[] = [];
    const app = new RustStream({ name: "tx-backlog", version: "1.0.0" }).broker(
      new PostgresBroker({ url: url(), table, poolSize }),
      (b) => {
        b.subscriber(new PostgresQueue(queue, { transactional: true, claim: 16 }), {
          codec: bytesCodec,
        })
          .workers(16)
          .handle(async (job, ctx) => {
            inWork += 1;
            most = Math.max(most, inWork);
            await transactionOf(ctx.delivery).query("SELECT pg_sleep(0.01)");
            inWork -= 1;
            done.push(text(job));
          });
      },
    );
    t = await TestApp.startLive(app);
    await waitUntil(30_000, "the backlog drained", () => done.length === 40);
    expect(new Set(done).size).toBe(40);
    expect(most).toBeLessThanOrEqual(poolSize - 1);
    expect(most).toBeGreaterThan(1);
    await waitUntil(10_000, "every row acked", async () => (await rowsOf(queue)) === 0);
  });
});

describe("a publish in the caller's transaction", () => {
  let connected: ConnectedPostgresBroker;
  beforeAll(async () => {
    connected = await broker().connect();
  });
  afterAll(() => connected.shutdown());

  /** Reads the queue through a sentinel published outside any transaction. */
  async function readToSentinel(queue: string): Promise<string[]> {
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs: 200 }));
    await publisher.publish({ name: queue, payload: bytes("sentinel") });
    const seen: string[] = [];
    while (!seen.includes("sentinel")) {
      for (const d of await subscription.nextBatch(10)) {
        seen.push(text(d.payload));
        await d.ack();
      }
    }
    await subscription.close();
    return seen;
  }

  it("is claimable only once the transaction commits", async () => {
    const queue = uniqueName("outbox-commit");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const caller = new pg.Client({ connectionString: url() });
    await caller.connect();
    try {
      await caller.query("BEGIN");
      await publisher.publish({
        name: queue,
        payload: bytes("in-tx"),
        options: { transaction: caller },
      });
      // Not committed: a reader finds only the sentinel behind it.
      expect(await readToSentinel(queue)).toEqual(["sentinel"]);
      await caller.query("COMMIT");
      expect(await readToSentinel(queue)).toEqual(["in-tx", "sentinel"]);
    } finally {
      await caller.end();
    }
  });

  it("is never delivered when the transaction rolls back", async () => {
    const queue = uniqueName("outbox-rollback");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const caller = new pg.Client({ connectionString: url() });
    await caller.connect();
    try {
      await caller.query("BEGIN");
      await publisher.publish({
        name: queue,
        payload: bytes("rolled-back"),
        options: { transaction: caller },
      });
      await caller.query("ROLLBACK");
      expect(await readToSentinel(queue)).toEqual(["sentinel"]);
      expect(await rowsOf(queue)).toBe(0);
    } finally {
      await caller.end();
    }
  });
});

describe("the wake-up listener", () => {
  it("notices its connection was ended, listens again, and claims what arrived meanwhile", async () => {
    const applicationName = uniqueName("listener");
    const changes: ConnectionChange[] = [];
    const connected = await broker({ applicationName }).connect({
      onState: (change) => changes.push(change),
    });
    try {
      const queue = uniqueName("woken");
      // A poll far beyond the test: only a wake-up brings the row.
      const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs: 600_000 }));
      const pulled = subscription.nextBatch(1);
      // The pull has looked (a claim, then the next due time: none) and waits for a wake-up: the
      // last statement of its idle connection is that look.
      await waitUntil(10_000, "the pull waiting", async () => {
        const { rows } = await sql.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle' AND query LIKE 'SELECT EXTRACT(EPOCH%'",
          [applicationName],
        );
        return rows.length > 0;
      });
      // Inserted without a NOTIFY, as if its wake-up had been lost with the listener.
      await sql.query(
        `INSERT INTO ${table} (queue, payload) VALUES ($1, convert_to('meanwhile', 'UTF8'))`,
        [queue],
      );
      const ended = await sql.query(
        "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1",
        [`${applicationName} listen`],
      );
      expect(ended.rows.map((r) => r.ended)).toEqual([true]);
      const [delivery] = await pulled;
      expect(text(delivery!.payload)).toBe("meanwhile");
      await delivery!.ack();
      expect(changes.map((c) => c.state)).toEqual(["reconnecting", "connected"]);
      expect(connected.state).toBe("connected");
      await subscription.close();
    } finally {
      await connected.shutdown();
    }
  });
});

import {
  bytes as bytesCodec,
  type Delivery,
  RustStream,
  type SubscriberBuilder,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PostgresBroker,
  type PostgresPublishOptions,
  PostgresQueue,
  transactionOf,
} from "../src/index.js";
import { waitUntil } from "./support.js";

// A transactional queue with `keyOrder` whose head row's transaction a fault ends (its backend
// terminated, as a cut does; its lock kept by another session, as a stalled backend keeps it): the
// key's later rows must not commit before the head does. Found by the chaos suite's
// postgres-queue-transactional (business rows committed out of key order); here each way it
// happened, alone, on the real server: a row claimed with the head and acked after the head's
// failed settle, during it, or after the head was claimed again; and a later row claimed by the
// same claimant while another row of the head's claim is held; and, in an app, a row claimed with
// the head is not handed to its handler before the head is handled again. Commit order is the business
// table's serial: every business row is written and committed by one step of the test, in turn.

const table = "key_order_faults";
const leaseMs = 1500;
const url = () => requireEnv("POSTGRES_URL");

let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: url() });
  await sql.connect();
});
afterAll(() => sql.end());

const encode = (name: string) => new TextEncoder().encode(name);
/** Locks the delivery's row from another session, as a stalled backend keeps its lock. */
async function lockElsewhere(locker: pg.Client, d: { readonly position: { readonly id: bigint } }) {
  await locker.query("BEGIN");
  await locker.query(`SELECT id FROM ${table} WHERE id = $1 FOR UPDATE`, [String(d.position.id)]);
}
const nameOf = (d: Delivery) => new TextDecoder().decode(d.payload);

/** A queue of its own with a business table beside it, and the broker's connection. */
async function setUp(prefix: string) {
  const queue = uniqueName(prefix);
  const business = `${prefix}_business_${queue.replaceAll("-", "_")}`;
  await sql.query(
    `CREATE TABLE ${business} (seq bigserial PRIMARY KEY, name text NOT NULL, attempt int NOT NULL)`,
  );
  const connected = await new PostgresBroker({ url: url(), table, ensureSchema: true }).connect();
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  const publish = (rows: readonly (readonly [name: string, key: string])[]) =>
    publisher.transaction(async (tx) => {
      for (const [name, key] of rows) {
        await tx.publish({ name: queue, payload: encode(name), partitionKey: key });
      }
    });
  const subscription = await connected.subscribe(
    new PostgresQueue(queue, { transactional: true, leaseMs, pollMs: 100 }),
  );
  /** The handler's work: its business row, in the delivery's transaction. */
  const write = (d: Delivery) =>
    transactionOf(d).query(`INSERT INTO ${business} (name, attempt) VALUES ($1, $2)`, [
      nameOf(d),
      d.redeliveryCount,
    ]);
  /** Ends the delivery's transaction from the server's side, as a lost connection does. */
  const cut = async (d: Delivery) => {
    const pid = (await transactionOf(d).query("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
    const ended = await sql.query("SELECT pg_terminate_backend($1) AS ok", [pid]);
    expect(ended.rows[0].ok).toBe(true);
  };
  /** Handles claims in turn (write, ack) until the queue holds `left` rows; records what came. */
  const drain = async (handled: string[], left = 0) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const rows = await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE queue = $1`, [
        queue,
      ]);
      if (rows.rows[0].n === left) return;
      if (Date.now() > deadline) throw new Error(`${rows.rows[0].n} rows still undone`);
      for (const d of await subscription.nextBatch(16)) {
        handled.push(`${nameOf(d)}#${d.redeliveryCount}`);
        await write(d);
        await d.ack();
      }
    }
  };
  const committed = async () =>
    (await sql.query(`SELECT name, attempt FROM ${business} ORDER BY seq`)).rows;
  /** Key a's head and the row behind it, published together and taken by one claim. */
  const headAndNext = async () => {
    await publish([
      ["a1", "a"],
      ["a2", "a"],
    ]);
    const first = await subscription.nextBatch(16);
    expect(first.map(nameOf)).toEqual(["a1", "a2"]);
    return [first[0]!, first[1]!] as const;
  };
  /** Drains the queue: the head comes back when its lease ends, the row behind it after it. */
  const bothBackInOrder = async () => {
    const handled: string[] = [];
    await drain(handled);
    expect(handled).toEqual(["a1#2", "a2#2"]);
    expect(await committed()).toEqual([
      { name: "a1", attempt: 2 },
      { name: "a2", attempt: 2 },
    ]);
  };
  const end = async () => {
    await connected.shutdown();
    await sql.query(`DROP TABLE IF EXISTS ${business}`);
  };
  return {
    queue,
    subscription,
    publish,
    write,
    cut,
    drain,
    committed,
    headAndNext,
    bothBackInOrder,
    end,
  };
}

describe("a transactional queue's key order when a fault ends the head's transaction", () => {
  it("a row claimed with its head does not commit before the head, whose transaction was lost", async () => {
    const t = await setUp("kof_claimed");
    try {
      // One claim takes the key's head and the row behind it.
      const [a1, a2] = await t.headAndNext();
      await t.write(a1);
      await t.cut(a1);
      await expect(Promise.resolve(a1.ack())).rejects.toThrow();
      // The key's lane goes on to the next row, as the runtime's does after a failed settle: its
      // handler's first statement fails, and so would its ack.
      await expect(t.write(a2)).rejects.toThrow(/earlier row/);
      await expect(Promise.resolve(a2.ack())).rejects.toThrow(/earlier row/);
      // a1 comes back when its lease ends, a2 behind it in the same claim.
      await t.bothBackInOrder();
    } finally {
      await t.end();
    }
  });

  it("a row claimed with its head does not commit before the head, whose lost backend still locks it", async () => {
    const t = await setUp("kof_zombie");
    const locker = new pg.Client({ connectionString: url() });
    await locker.connect();
    try {
      const [a1, a2] = await t.headAndNext();
      await t.write(a1);
      await t.cut(a1);
      // A stalled connection's backend keeps its transaction, and the row's lock, until it notices
      // the connection is gone, after the client saw the transaction fail: a lock held elsewhere
      // stands in for it.
      await lockElsewhere(locker, a1);
      await expect(Promise.resolve(a1.ack())).rejects.toThrow();
      await expect(t.write(a2)).rejects.toThrow(/earlier row/);
      await expect(Promise.resolve(a2.ack())).rejects.toThrow(/earlier row/);
      await locker.query("COMMIT");
      await t.bothBackInOrder();
    } finally {
      await locker.end();
      await t.end();
    }
  });

  it("a row acked while its head's settle is still under way waits for it, and does not commit before the head", async () => {
    const t = await setUp("kof_racing");
    const locker = new pg.Client({ connectionString: url() });
    await locker.connect();
    try {
      const [a1, a2] = await t.headAndNext();
      await t.write(a1);
      await t.write(a2);
      await t.cut(a1);
      await lockElsewhere(locker, a1);
      // The runtime's lane settles a row and goes on to the next without waiting for the answer.
      const acks = [Promise.resolve(a1.ack()), Promise.resolve(a2.ack())];
      await expect(acks[0]).rejects.toThrow();
      await expect(acks[1]).rejects.toThrow(/earlier row/);
      await locker.query("COMMIT");
      await t.bothBackInOrder();
    } finally {
      await locker.end();
      await t.end();
    }
  });

  it("a handler's statement while its head's settle is still under way waits for it, and fails when the head's failed", async () => {
    const t = await setUp("kof_stmt");
    try {
      const [a1, a2] = await t.headAndNext();
      await t.write(a1);
      await t.cut(a1);
      // The lane goes on to a2's handler as soon as a1's ack is sent.
      const a1Ack = Promise.resolve(a1.ack());
      const a2Write = t.write(a2);
      await expect(a1Ack).rejects.toThrow();
      await expect(a2Write).rejects.toThrow(/earlier row/);
      await expect(Promise.resolve(a2.nack({ requeue: true }))).resolves.toBe("ok");
      await t.bothBackInOrder();
    } finally {
      await t.end();
    }
  });

  // Read without an app, the reader asks each row's handOver before handling it, as the runtime
  // does: the row behind waits for the head handed over before it, and goes back unhandled.
  it("read without an app, the row behind the head asked to be handed over waits for the head's settle, and goes back unhandled when it failed", async () => {
    const t = await setUp("kof_bare");
    try {
      const [a1, a2] = await t.headAndNext();
      expect(a1.handOver?.()).toBeUndefined();
      await t.write(a1);
      await t.cut(a1);
      // Asked before a1's settle is sent: it waits for a1, handed over before it.
      const a2Turn = a2.handOver?.();
      expect(a2Turn).toBeInstanceOf(Promise);
      await expect(Promise.resolve(a1.ack())).rejects.toThrow();
      await expect(a2Turn).resolves.toBe(false);
      const handled: string[] = [];
      await t.drain(handled);
      // a2's claim was taken back with it: its next one is its first.
      expect(handled).toEqual(["a1#2", "a2#1"]);
      expect(await t.committed()).toEqual([
        { name: "a1", attempt: 2 },
        { name: "a2", attempt: 1 },
      ]);
    } finally {
      await t.end();
    }
  });

  it("a row claimed with its head does not commit before the head, claimed again while the row waited its turn", async () => {
    const t = await setUp("kof_back");
    try {
      const [a1, a2] = await t.headAndNext();
      await t.write(a1);
      await t.cut(a1);
      await expect(Promise.resolve(a1.ack())).rejects.toThrow();
      // a2 waits its turn (a long lane) past a1's lease: the next claim brings a1 back alone, in a
      // live transaction again, while a2 is still held.
      const back = await t.subscription.nextBatch(16);
      expect(back.map((d) => `${nameOf(d)}#${d.redeliveryCount}`)).toEqual(["a1#2"]);
      await expect(t.write(a2)).rejects.toThrow(/earlier row/);
      await expect(Promise.resolve(a2.ack())).rejects.toThrow(/earlier row/);
      await t.write(back[0]!);
      await back[0]!.ack();
      const handled: string[] = [];
      await t.drain(handled);
      expect(handled).toEqual(["a2#2"]);
      expect(await t.committed()).toEqual([
        { name: "a1", attempt: 2 },
        { name: "a2", attempt: 2 },
      ]);
    } finally {
      await t.end();
    }
  });

  it("a later row is not claimed by the head's own claimant while another row of the head's claim is held", async () => {
    const t = await setUp("kof_shared");
    try {
      await t.publish([
        ["b1", "b"],
        ["a1", "a"],
      ]);
      // One claim, one lease: b1 stays in work while a1's transaction is lost.
      const first = await t.subscription.nextBatch(16);
      expect(first.map(nameOf)).toEqual(["b1", "a1"]);
      const [b1, a1] = [first[0]!, first[1]!];
      await t.write(a1);
      await t.cut(a1);
      await expect(Promise.resolve(a1.ack())).rejects.toThrow();
      await t.publish([["a2", "a"]]);
      // The next claim brings a1 back (its lease ended) before a2, never a2 alone first.
      const handled: string[] = [];
      await t.drain(handled, 1).finally(async () => {
        await t.write(b1);
        await b1.ack();
      });
      expect(handled).toEqual(["a1#2", "a2#1"]);
      expect(await t.committed()).toEqual([
        { name: "a1", attempt: 2 },
        { name: "a2", attempt: 1 },
        { name: "b1", attempt: 1 },
      ]);
    } finally {
      await t.end();
    }
  });
});

/** How each app test mounts the queue's handler: its lanes, and what the handler returns. */
type Mount = (
  b: SubscriberBuilder<Uint8Array, unknown, Record<string, never>, PostgresPublishOptions>,
  handle: (d: Delivery) => Promise<void>,
) => void;

/**
 * An app whose handler writes each row's business row and cuts the head's first transaction, so
 * its ack fails: what the handler does outside its transaction (the order it ran in, with each
 * attempt) must see the head, the head again, then the row behind it, on its first attempt.
 */
async function headAgainBeforeNext(prefix: string, mount: Mount): Promise<void> {
  const t = await setUp(prefix);
  // The raw subscription of setUp takes nothing: it is closed before the rows are published.
  await t.subscription.close();
  let app: TestApp | undefined;
  try {
    const handled: string[] = [];
    const service = new RustStream({ name: "kof-app", version: "1.0.0" }).broker(
      new PostgresBroker({ url: url(), table }),
      (b) => {
        mount(
          b.subscriber(new PostgresQueue(t.queue, { transactional: true, leaseMs, pollMs: 100 }), {
            codec: bytesCodec,
          }),
          async (d) => {
            handled.push(`${nameOf(d)}#${d.redeliveryCount}`);
            await t.write(d);
            // The head's first transaction is lost before its ack, which then fails.
            if (nameOf(d) === "a1" && d.redeliveryCount === 1) await t.cut(d);
          },
        );
      },
    );
    // Both rows wait in the table before the app starts, so its first claim takes both.
    await t.publish([
      ["a1", "a"],
      ["a2", "a"],
    ]);
    app = await TestApp.startLive(service);
    await waitUntil(20_000, "both rows committed", async () => {
      const left = await sql.query(`SELECT 1 FROM ${table} WHERE queue = $1`, [t.queue]);
      return left.rowCount === 0 && (await t.committed()).length === 2;
    });
    await app.settle();
    expect(handled).toEqual(["a1#1", "a1#2", "a2#1"]);
    expect(await t.committed()).toEqual([
      { name: "a1", attempt: 2 },
      { name: "a2", attempt: 1 },
    ]);
  } finally {
    await app?.stop();
    await t.end();
  }
}

describe("a transactional queue's key order in an app when a fault ends the head's transaction", () => {
  it("a row claimed with its head is not handed to its handler before the head is handled again, and goes back with its attempt uncounted", async () => {
    await headAgainBeforeNext("kof_app", (b, handle) =>
      b.workers(2, { key: "partitionKey" }).handle((_payload, ctx) => handle(ctx.delivery)),
    );
  });

  // A handler returning a reply settles after the reply's publish, and its lane goes on meanwhile:
  // the row behind waits for the head's settle before its handler runs.
  it("with a reply, the row behind the head waits for the head's settle, after the reply's publish", async () => {
    const replies = uniqueName("kof-replies");
    try {
      await headAgainBeforeNext("kof_reply", (b, handle) =>
        b.reply(replies).handle(async (payload, ctx) => {
          await handle(ctx.delivery);
          return payload;
        }),
      );
    } finally {
      await sql.query(`DELETE FROM ${table} WHERE queue = $1`, [replies]);
    }
  });

  // Workers without a key run rows of one key side by side: the row behind the head waits for
  // the head's settle before its handler runs, whatever lane it is in.
  it("on workers without a key, the row behind the head waits for the head's settle", async () => {
    await headAgainBeforeNext("kof_workers", (b, handle) =>
      b.workers(2).handle((_payload, ctx) => handle(ctx.delivery)),
    );
  });
});

// A batch handler's rows are asked too (core asks each in order, telling it the batch it travels
// with): a key's rows of one batch do not wait for each other, all settled after the handler, and
// a row held behind a head another batch handles waits for it, and goes back unhandled when the
// head's settle failed, the batch running with the rest.
describe("a transactional queue's key order with a batch handler", () => {
  it("read without an app, the rows of one key asked with their batch do not wait for each other", async () => {
    const t = await setUp("kof_bare_batch");
    try {
      const [a1, a2] = await t.headAndNext();
      expect(a1.handOver?.([a1, a2])).toBeUndefined();
      // Asked alone, a2 would wait for a1's settle; asked with a1 as its batch, it does not.
      expect(a2.handOver?.([a1, a2])).toBeUndefined();
      await t.write(a1);
      await t.write(a2);
      await a1.ack();
      await a2.ack();
      expect(await t.committed()).toEqual([
        { name: "a1", attempt: 1 },
        { name: "a2", attempt: 1 },
      ]);
    } finally {
      await t.end();
    }
  });

  it("in an app, a batch holding a key's rows runs them together", async () => {
    const t = await setUp("kof_batch_together");
    await t.subscription.close();
    let app: TestApp | undefined;
    try {
      const batches: string[][] = [];
      const service = new RustStream({ name: "kof-app", version: "1.0.0" }).broker(
        new PostgresBroker({ url: url(), table }),
        (b) => {
          b.subscriber(new PostgresQueue(t.queue, { transactional: true, leaseMs, pollMs: 100 }), {
            codec: bytesCodec,
          })
            .batch(8)
            .handle(async (_payloads, ctx) => {
              batches.push(ctx.deliveries.map((d) => `${nameOf(d)}#${d.redeliveryCount}`));
              for (const d of ctx.deliveries) await t.write(d);
            });
        },
      );
      // All three wait in the table before the app starts, so its first claim takes them.
      await t.publish([
        ["a1", "a"],
        ["a2", "a"],
        ["b1", "b"],
      ]);
      app = await TestApp.startLive(service);
      await waitUntil(20_000, "the rows committed", async () => {
        const left = await sql.query(`SELECT 1 FROM ${table} WHERE queue = $1`, [t.queue]);
        return left.rowCount === 0 && (await t.committed()).length === 3;
      });
      await app.settle();
      expect(batches).toEqual([["a1#1", "a2#1", "b1#1"]]);
      expect((await t.committed()).map((r) => r.name)).toEqual(["a1", "a2", "b1"]);
    } finally {
      await app?.stop();
      await t.end();
    }
  });

  it("in an app, a row held behind a head another batch handles goes back unhandled when the head's settle failed, its batch running with the rest", async () => {
    const t = await setUp("kof_batch_behind");
    await t.subscription.close();
    let app: TestApp | undefined;
    try {
      const batches: string[][] = [];
      const service = new RustStream({ name: "kof-app", version: "1.0.0" }).broker(
        new PostgresBroker({ url: url(), table }),
        (b) => {
          b.subscriber(new PostgresQueue(t.queue, { transactional: true, leaseMs, pollMs: 100 }), {
            codec: bytesCodec,
          })
            .workers(2)
            .batch(2)
            .handle(async (_payloads, ctx) => {
              batches.push(ctx.deliveries.map((d) => `${nameOf(d)}#${d.redeliveryCount}`));
              for (const d of ctx.deliveries) {
                await t.write(d);
                if (nameOf(d) !== "a1" || d.redeliveryCount !== 1) continue;
                // While the head is handled, a2 (behind it) and b1 come, and the second worker's
                // claim takes them as one batch; then the head's transaction is lost, so its ack
                // fails.
                await t.publish([
                  ["a2", "a"],
                  ["b1", "b"],
                ]);
                await waitUntil(20_000, "a2 and b1 claimed", async () => {
                  const claimed = await sql.query(
                    `SELECT 1 FROM ${table} WHERE queue = $1 AND attempts > 0`,
                    [t.queue],
                  );
                  return claimed.rowCount === 3;
                });
                await t.cut(d);
              }
            });
        },
      );
      await t.publish([["a1", "a"]]);
      app = await TestApp.startLive(service);
      await waitUntil(20_000, "the rows committed", async () => {
        const left = await sql.query(`SELECT 1 FROM ${table} WHERE queue = $1`, [t.queue]);
        return left.rowCount === 0 && (await t.committed()).length === 3;
      });
      await app.settle();
      // a2 went back unhandled, its attempt uncounted; b1's batch ran without it, once the
      // head's settle failed; the head came back when its lease ended, a2 after it.
      expect(batches.flat()).toEqual(["a1#1", "b1#1", "a1#2", "a2#1"]);
      expect(batches[1]).toEqual(["b1#1"]);
      expect(await t.committed()).toEqual([
        { name: "b1", attempt: 1 },
        { name: "a1", attempt: 2 },
        { name: "a2", attempt: 1 },
      ]);
    } finally {
      await app?.stop();
      await t.end();
    }
  });
});

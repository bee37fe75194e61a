import { type RunningApp, RustStream } from "@ruststream/core";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresBroker, PostgresQueue, transactionOf } from "../src/index.js";
import { waitUntil } from "./support.js";

// A transactional handler holds its claim's connection between statements. When the server ends
// that connection while the handler awaits something else, `pg` emits `error` on a client its pool
// no longer listens to: without a listener of ours the process ended there (found by the chaos
// suite's postgres-queue-transactional). Here the process goes on, the attempt's work is rolled
// back with its ack, and the row comes back once its lease ends.

const table = "lost_queue";
const url = () => requireEnv("POSTGRES_URL");

let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: url() });
  await sql.connect();
});
afterAll(() => sql.end());

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe("a transactional handler's connection ended by the server", () => {
  it("while the handler awaits: the process goes on, nothing of the attempt commits, and the row comes back", async () => {
    const queue = uniqueName("lost");
    const applicationName = uniqueName("lost-app");
    const business = `lost_business_${queue.replaceAll("-", "_")}`;
    await sql.query(`CREATE TABLE ${business} (id text NOT NULL, attempt int NOT NULL)`);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let waiting = false;
    const attempts: number[] = [];
    try {
      const broker = new PostgresBroker({ url: url(), table, ensureSchema: true, applicationName });
      const app = new RustStream({ name: "lost-connection", version: "1.0.0" }).broker(
        broker,
        (b) => {
          b.subscriber(
            new PostgresQueue(queue, { transactional: true, leaseMs: 2000, pollMs: 200 }),
          ).handle(async (payload, ctx) => {
            attempts.push(ctx.attempt);
            const tx = transactionOf(ctx.delivery);
            await tx.query(`INSERT INTO ${business} (id, attempt) VALUES ($1, $2)`, [
              (payload as { id: string }).id,
              ctx.attempt,
            ]);
            if (ctx.attempt === 1) {
              // Idle in its transaction until the test has ended the connection.
              waiting = true;
              await released;
            }
          });
        },
      );
      // Started as a service is, not through TestApp, whose publish waits for the reaction.
      running = await app.start();
      await running.publish(queue, { id: "order-1" });
      await waitUntil(15_000, "the first attempt waiting", () => waiting);

      const held = await sql.query(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle in transaction'`,
        [applicationName],
      );
      expect(held.rows).toHaveLength(1);
      const ended = await sql.query("SELECT pg_terminate_backend($1) AS ok", [held.rows[0].pid]);
      expect(ended.rows[0].ok).toBe(true);
      release();

      // The second attempt commits its write and its ack once the first one's lease has ended.
      await waitUntil(20_000, "the second attempt's commit", async () => {
        const rows = await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE queue = $1`, [
          queue,
        ]);
        return attempts.length >= 2 && rows.rows[0].n === 0;
      });
      expect(attempts).toEqual([1, 2]);
      const written = await sql.query(`SELECT id, attempt FROM ${business}`);
      expect(written.rows).toEqual([{ id: "order-1", attempt: 2 }]);
    } finally {
      release();
      await sql.query(`DROP TABLE IF EXISTS ${business}`);
    }
  });
});

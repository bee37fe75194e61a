import { fileURLToPath } from "node:url";
import {
  bytes,
  killServices,
  requireEnv,
  startService,
  text,
  uniqueName,
} from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresBroker, PostgresQueue } from "../src/index.js";
import { waitUntil } from "./support.js";

// A worker process killed with SIGKILL while it holds leased rows: its rows come back to the next
// claim once their lease ends (not before), each with the attempt counted, and none is lost.

const fixture = fileURLToPath(new URL("./fixtures/stuckWorker.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
afterAll(killServices);

describe("a worker killed mid-handler", () => {
  it("its rows come back once their lease ends, attempt 2, and nothing is lost", async () => {
    const url = requireEnv("POSTGRES_URL");
    const queue = uniqueName("crash");
    const leaseMs = 3000;
    const total = 5;
    const seen: string[] = [];
    const worker = await startService({
      fixture,
      args: [url, queue, String(leaseMs)],
      cwd,
      onLine: (line) => seen.push(line),
    });
    const broker = new PostgresBroker({ url, table: "crash_queue", ensureSchema: true });
    const connected = await broker.connect();
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      for (let i = 0; i < total; i++)
        await publisher.publish({ name: queue, payload: bytes(`job-${i}`) });
      // Every row claimed by the worker and in a handler that never returns.
      await waitUntil(10_000, "the worker holding every row", () => seen.length === total);
      expect(seen.sort()).toEqual([...Array(total).keys()].map((i) => `job-${i} 1`));
      worker.child.kill("SIGKILL");
      await worker.exited;
      // Each row's lease, as the dead worker left it (claimed, or renewed, at its own time).
      const { rows: leased } = await sql.query(
        "SELECT id::text AS id, locked_until::text AS until FROM crash_queue WHERE queue = $1 AND lease IS NOT NULL",
        [queue],
      );
      expect(leased).toHaveLength(total);
      const until = new Map(leased.map((r) => [r.id as string, r.until as string]));

      const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs: 200 }));
      const back: string[] = [];
      while (back.length < total) {
        const batch = await subscription.nextBatch(total);
        for (const d of batch) {
          // Claimed only once the dead worker's lease on it was over, by the server's own clock.
          const { rows } = await sql.query("SELECT now() >= $1::timestamptz AS after", [
            until.get(d.position.toString()),
          ]);
          expect(rows[0].after, `${text(d.payload)} claimed after its lease's end`).toBe(true);
          expect(d.redeliveryCount).toBe(2);
          back.push(text(d.payload));
          expect(await d.ack()).toBe("ok");
        }
      }
      expect(back.sort()).toEqual([...Array(total).keys()].map((i) => `job-${i}`));
      await subscription.close();
      const { rows: left } = await sql.query(
        "SELECT count(*)::int AS n FROM crash_queue WHERE queue = $1",
        [queue],
      );
      expect(left[0].n).toBe(0);
    } finally {
      await sql.end();
      await connected.shutdown();
    }
  }, 60_000);
});

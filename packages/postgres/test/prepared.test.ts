import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBroker, PostgresQueue } from "../src/index.js";

// The queue's own statements go as named prepared statements on pg (parsed once per connection),
// unless `prepare: false` (a pooler that keeps no prepared statements): read on the one connection
// of a pool of the test's, in pg_prepared_statements, after a publish, a claim and an ack.

const table = "prepared_statements";

/** The names of the queue's statements prepared on the pool's connection after one row's round. */
async function preparedAfterOneRow(prepare: boolean | undefined): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: requireEnv("POSTGRES_URL"), max: 1 });
  try {
    const connected = await new PostgresBroker({
      pool,
      table,
      ensureSchema: true,
      ...(prepare === undefined ? {} : { prepare }),
    }).connect();
    try {
      const queue = uniqueName("prepared");
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: queue, payload: new TextEncoder().encode("{}") });
      const subscription = await connected.subscribe(new PostgresQueue(queue));
      const [delivery] = await subscription.nextBatch(1);
      expect(delivery).toBeDefined();
      await delivery!.ack();
      const { rows } = await pool.query<{ name: string; statement: string }>(
        "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'ruststream\\_%'",
      );
      return rows.map((r) => `${r.name} ${r.statement.slice(0, 30)}`);
    } finally {
      await connected.shutdown();
    }
  } finally {
    await pool.end();
  }
}

describe("prepared statements", () => {
  it("the publish's INSERT, the claim and the ack are prepared on the connection by default", async () => {
    const names = await preparedAfterOneRow(undefined);
    expect(names.some((n) => n.includes("INSERT INTO"))).toBe(true);
    expect(names.some((n) => n.includes("WITH RECURSIVE walk"))).toBe(true);
    expect(names.some((n) => n.includes("DELETE FROM"))).toBe(true);
  });

  it("prepare: false prepares none of them", async () => {
    expect(await preparedAfterOneRow(false)).toEqual([]);
  });

  it("prepare that is not a boolean is refused, naming the option", () => {
    expect(
      () =>
        new PostgresBroker({
          url: "postgres://x@127.0.0.1/db",
          prepare: "no" as unknown as boolean,
        }),
    ).toThrow(/prepare must be true or false/);
  });
});

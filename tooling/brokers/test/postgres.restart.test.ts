import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { exclusive, restart } from "../src/postgres.mjs";
import { requireEnv } from "../src/requireEnv.mjs";

// Restarts the cluster every project's live tests share, so it runs in a project of its own
// (vitest.restart.config.ts) whose group starts once every other project's has ended.

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: requireEnv("POSTGRES_URL") });
  c.on("error", () => {});
  await c.connect();
  return c;
}

describe("postgres (a hard restart)", () => {
  it(
    "committed rows survive a SIGKILL of the server; a connection open across it is ended",
    () =>
      exclusive(async () => {
        const table = `restart_${randomUUID().replaceAll("-", "")}`;
        const before = await client();
        const ended = new Promise<void>((resolve) => before.once("end", resolve));
        await before.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`);
        await before.query(`INSERT INTO ${table} SELECT generate_series(1, 100)`);

        // A crash, not a polite shutdown: what was committed is in the WAL and recovered from it.
        await restart({ hard: true });
        await ended;

        const after = await client();
        try {
          const { rows } = await after.query(`SELECT count(*)::int AS n FROM ${table}`);
          expect(rows[0].n).toBe(100);
        } finally {
          await after.query(`DROP TABLE ${table}`);
          await after.end();
        }
      }),
    120_000,
  );
});

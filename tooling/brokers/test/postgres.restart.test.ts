import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { restartable } from "../src/postgres.mjs";

// Restarts a cluster of its own (the restartable one, on its own port), never the one every
// project's live tests share; in the restarts project all the same, as the other restart tests.

async function client(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => {});
  await c.connect();
  return c;
}

describe("postgres (a hard restart)", () => {
  it(
    "committed rows survive a SIGKILL of the server; a connection open across it is ended",
    () =>
      restartable.exclusive(async () => {
        const url = await restartable.up();
        try {
          await crashAndRecover(url);
        } finally {
          await restartable.down();
        }
      }),
    120_000,
  );
});

async function crashAndRecover(url: string): Promise<void> {
  const table = `restart_${randomUUID().replaceAll("-", "")}`;
  const before = await client(url);
  const ended = new Promise<void>((resolve) => before.once("end", resolve));
  await before.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`);
  await before.query(`INSERT INTO ${table} SELECT generate_series(1, 100)`);

  // A crash, not a polite shutdown: what was committed is in the WAL and recovered from it.
  await restartable.restart({ hard: true });
  await ended;

  const after = await client(url);
  try {
    const { rows } = await after.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(rows[0].n).toBe(100);
  } finally {
    await after.query(`DROP TABLE ${table}`);
    await after.end();
  }
}

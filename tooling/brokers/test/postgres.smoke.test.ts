import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { requireEnv } from "../src/requireEnv.mjs";

const clients: pg.Client[] = [];

async function client(url = requireEnv("POSTGRES_URL")): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  c.on("error", () => {});
  clients.push(c);
  await c.connect();
  return c;
}

afterEach(async () => {
  for (const c of clients.splice(0)) await c.end().catch(() => {});
});

describe("postgres on loopback", () => {
  it("our role logs in with its password, in its own database, on our cluster", async () => {
    const c = await client();
    const { rows } = await c.query(
      "SELECT current_user AS who, current_database() AS db, current_setting('server_version_num')::int AS version, inet_server_addr()::text AS addr, current_setting('unix_socket_directories') AS sockets",
    );
    expect(rows[0]).toMatchObject({ who: "ruststream", db: "ruststream", addr: "127.0.0.1/32" });
    expect(rows[0].version).toBeGreaterThanOrEqual(150000);
    // No Unix socket: only the TCP port on loopback.
    expect(rows[0].sockets).toBe("");
  });

  it("a wrong password is refused", async () => {
    const url = new URL(requireEnv("POSTGRES_URL"));
    url.password = "wrong";
    await expect(client(url.toString())).rejects.toThrow(/password authentication failed/);
  });

  it("bytes round-trip, and a row locked by one claim is skipped by another", async () => {
    const a = await client();
    const b = await client();
    const table = `smoke_${randomUUID().replaceAll("-", "")}`;
    await a.query(`CREATE TABLE ${table} (id int PRIMARY KEY, body bytea)`);
    try {
      const bytes = Buffer.from([0, 13, 10, 255, 1]);
      await a.query(`INSERT INTO ${table} VALUES (1, $1), (2, $1)`, [bytes]);
      await a.query("BEGIN");
      const first = await a.query(
        `SELECT id, body FROM ${table} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
      );
      expect(first.rows).toEqual([{ id: 1, body: bytes }]);
      const second = await b.query(
        `SELECT id FROM ${table} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
      );
      expect(second.rows).toEqual([{ id: 2 }]);
      await a.query("COMMIT");
    } finally {
      await a.query(`DROP TABLE ${table}`);
    }
  });

  it("a NOTIFY reaches a LISTENing session", async () => {
    const listener = await client();
    const channel = `smoke_${randomUUID().replaceAll("-", "")}`;
    const heard = new Promise<string | undefined>((resolve) =>
      listener.on("notification", (n) => {
        if (n.channel === channel) resolve(n.payload);
      }),
    );
    await listener.query(`LISTEN ${channel}`);
    const sender = await client();
    await sender.query("SELECT pg_notify($1, $2)", [channel, "hello"]);
    expect(await heard).toBe("hello");
  });
});

import { isRustStreamError } from "@ruststream/core";
import { requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectedPostgresBroker,
  PostgresBroker,
  PostgresQueue,
  type PostgresQueueDelivery,
} from "../src/index.js";

// Rows another writer with INSERT on the queue table left: header arrays holding a NULL, of two
// dimensions, or names and values that do not pair up. Each is still claimed and delivered, with
// its payload, marked unreadable for the decode policy; reading a NULL name's headers threw a
// TypeError, and the others made values up or dropped them.

const table = "hostile_rows";
let sql: pg.Client;
let connected: ConnectedPostgresBroker;
beforeAll(async () => {
  const url = requireEnv("POSTGRES_URL");
  connected = await new PostgresBroker({ url, table, ensureSchema: true }).connect();
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await connected?.shutdown();
});

const hostile: [string, string, string][] = [
  ["a NULL name", "ARRAY[NULL]::text[]", "ARRAY['\\x01'::bytea]"],
  ["an empty name", "ARRAY['']::text[]", "ARRAY['\\x01'::bytea]"],
  ["two names, one value", "ARRAY['a','b']::text[]", "ARRAY['\\x01'::bytea]"],
  ["a NULL value", "ARRAY['a']::text[]", "ARRAY[NULL]::bytea[]"],
  [
    "arrays of two dimensions",
    "ARRAY[['a','b'],['c','d']]::text[]",
    "ARRAY[['\\x01'::bytea,'\\x02'::bytea],['\\x03'::bytea,'\\x04'::bytea]]",
  ],
];

describe("a row whose header arrays another writer left", () => {
  it("is delivered marked unreadable, with its payload; a row of headers after it reads", async () => {
    const queue = uniqueName("hostile");
    const values = [
      ...hostile.map(([name, names, vals]) => `($1, '${name}'::bytea, ${names}, ${vals})`),
      `($1, 'good'::bytea, ARRAY['A']::text[], ARRAY['\\x01'::bytea])`,
    ];
    // One statement: the rows share a run time, and are claimed in the order of their ids.
    await sql.query(
      `INSERT INTO ${table} (queue, payload, header_names, header_values) VALUES ${values.join(", ")}`,
      [queue],
    );
    const subscription = await connected.subscribe(new PostgresQueue(queue, { pollMs: 100 }));
    const got: PostgresQueueDelivery[] = [];
    while (got.length < hostile.length + 1) {
      got.push(...((await subscription.nextBatch(10)) as PostgresQueueDelivery[]));
    }
    for (const [i, [name]] of hostile.entries()) {
      const d = got[i]!;
      expect(text(d.payload)).toBe(name);
      expect(
        isRustStreamError(d.decodeError, "invalid-argument"),
        `${name}: ${d.decodeError}`,
      ).toBe(true);
      expect(String(d.decodeError)).toContain("header");
      expect(d.headers.size, name).toBe(0);
    }
    const good = got[hostile.length]!;
    expect(text(good.payload)).toBe("good");
    expect(good.decodeError).toBeUndefined();
    expect([...(good.headers.get("a") ?? [])]).toEqual([1]);
    for (const d of got) expect(await d.ack()).toBe("ok");
    await subscription.close();
  });
});

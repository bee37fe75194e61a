import { setTimeout as sleep } from "node:timers/promises";
import { PGlite } from "@electric-sql/pglite";
import { requireEnv } from "@ruststream/tooling-testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe } from "vitest";
import { PgliteDriver } from "../src/client/pgliteDriver.js";
import { PostgresJsDriver } from "../src/client/postgresJsDriver.js";
import { SqlStore } from "../src/client/sqlStore.js";
import { queueTable } from "../src/table.js";
import { storeContract } from "./store.js";

// The seam's other two clients: the same statements, through postgres.js on the real server and
// through PGlite in the process, answer the store's checks as pg does (store.sql.test.ts).

describe("the SQL store through postgres.js", () => {
  const sql = postgres(requireEnv("POSTGRES_URL"), { onnotice: () => {} });
  let store: SqlStore | undefined;
  beforeAll(async () => {
    store = await SqlStore.open(new PostgresJsDriver(sql), queueTable("store_contract_js"), true);
  });
  afterAll(async () => {
    await store?.close();
    await sql.end();
  });
  storeContract({
    store: () => {
      if (store === undefined) throw new Error("the store did not open");
      return store;
    },
    pass: (ms) => sleep(ms),
  });
});

describe("the SQL store on PGlite", () => {
  let db: PGlite | undefined;
  let store: SqlStore | undefined;
  beforeAll(async () => {
    db = await PGlite.create();
    store = await SqlStore.open(new PgliteDriver(db), queueTable("store_contract"), true);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await db?.close();
  });
  storeContract({
    store: () => {
      if (store === undefined) throw new Error("the store did not open");
      return store;
    },
    pass: (ms) => sleep(ms),
  });
});

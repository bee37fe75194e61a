import { setTimeout as sleep } from "node:timers/promises";
import { requireEnv } from "@ruststream/tooling-testkit";
import { afterAll, beforeAll, describe } from "vitest";
import { PgDriver } from "../src/client/pgDriver.js";
import { SqlStore } from "../src/client/sqlStore.js";
import { queueTable } from "../src/table.js";
import { storeContract } from "./store.js";

describe("the SQL store on PostgreSQL", () => {
  let store: SqlStore | undefined;
  beforeAll(async () => {
    const driver = new PgDriver(
      { connectionString: requireEnv("POSTGRES_URL") },
      { owned: true, applicationName: "store-test", prepare: true },
    );
    store = await SqlStore.open(driver, queueTable("store_contract"), true);
  });
  afterAll(() => store?.close());
  storeContract({
    store: () => {
      if (store === undefined) throw new Error("the store did not open");
      return store;
    },
    pass: (ms) => sleep(ms),
  });
});

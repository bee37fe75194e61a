import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, expect, test } from "vitest";
import { PgDriver } from "../src/client/pgDriver.js";
import { SqlStore } from "../src/client/sqlStore.js";
import { backlogCap } from "../src/client/store.js";
import { queueTable } from "../src/table.js";

// The backlog count reads the undone rows of its queue up to its cap: the server cancels it past
// its limit, so a count never keeps the server scanning after a scrape stopped waiting. Here the
// cap is raised above 100,000 rows, so the count reads each of them.

const stores: SqlStore[] = [];
afterAll(() => Promise.all(stores.map((s) => s.close())));

async function open(backlogMs?: number): Promise<SqlStore> {
  const driver = new PgDriver(
    { connectionString: requireEnv("POSTGRES_URL") },
    { owned: true, applicationName: "backlog-limit-test", prepare: true },
  );
  const store = await SqlStore.open(driver, queueTable("backlog_limit"), true, backlogMs);
  stores.push(store);
  return store;
}

/** Above the 100,000 rows of the test: each is read. */
const uncapped = 1_000_000;

test("a count past its limit is cancelled by the server; within it, 100,000 rows are counted", async () => {
  const queue = uniqueName("deep");
  const driver = new PgDriver(
    { connectionString: requireEnv("POSTGRES_URL") },
    { owned: true, applicationName: "backlog-limit-fill", prepare: false },
  );
  const counted = await open();
  try {
    await driver.query(
      `INSERT INTO ${queueTable("backlog_limit").sql} (queue, payload) SELECT $1, '\\x00'::bytea FROM generate_series(1, 100000)`,
      [queue],
    );
  } finally {
    await driver.close();
  }
  try {
    expect(await counted.backlog(queue, undefined, uncapped)).toEqual({
      ready: 100_000,
      scheduled: 0,
      leased: 0,
    });
    // A limit of 1 ms: a count over 100,000 rows takes tens of milliseconds, so the server cancels it.
    const limited = await open(1);
    const error = await limited.backlog(queue, undefined, uncapped).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as { code?: string } | undefined)?.code).toBe("57014");
    // At the broker's cap the count stops there: the queue holds at least that many.
    expect(await counted.backlog(queue, undefined, backlogCap)).toEqual({
      ready: backlogCap,
      scheduled: 0,
      leased: 0,
    });
    // The cancelled count's transaction ended: the store goes on answering.
    expect(await counted.backlog(uniqueName("empty"), undefined, backlogCap)).toEqual({
      ready: 0,
      scheduled: 0,
      leased: 0,
    });
  } finally {
    // 100,000 rows of a shared server: gone once counted.
    await counted.purgeQueue(queue);
  }
});

import { RustStreamError } from "@ruststream/core";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBroker } from "../../src/index.js";
import { waitUntil } from "../support.js";
import { redisCli, relaysOne, startRelayApp, warnings } from "./support.js";

// The relay in an app (outbox.relayIn) reports each failed claim as the app's background-failure
// event (source outbox:<label>), beside its logger's warning, and claims again, and the first
// claim that works after them as one background-recovered event: on the real
// PostgreSQL, its outbox table (one of the test's own) renamed away under the running relay, so
// every claim fails with 42P01 (undefined table), then renamed back, after which a message written
// to it is relayed to the shared Redis. (A server away is no failed claim: the claim retries it
// itself, so a terminated backend would show nothing here.)

describe("the outbox relay's failed claims in an app", () => {
  it("emits a background-failure event per failed claim, logs each, and relays once the table is back", async () => {
    const url = requireEnv("POSTGRES_URL");
    const redisUrl = requireEnv("REDIS_URL");
    const table = uniqueName("claimfail").replaceAll("-", "_");
    const label = uniqueName("events");
    const name = uniqueName("orders");
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    const outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
    const away = `${outbox.table}_away`;
    const { logger, entries } = warnings();
    const claimWarnings = () =>
      entries.filter((e) => e.message === "outbox relay: claiming failed").length;
    const { running, failures, background, published } = await startRelayApp(outbox, {
      redisUrl,
      label,
      name,
      logger,
    });
    try {
      expect(failures).toEqual([]);
      await sql.query(`ALTER TABLE ${outbox.table} RENAME TO ${away}`);
      // Two at least: the relay goes on claiming after a failure, and reports each.
      await waitUntil(20_000, "two failed claims reported", () => failures.length >= 2);
      await sql.query(`ALTER TABLE ${away} RENAME TO ${outbox.table}`);
      // Told by the first claim that works, rows or none: before any row is written.
      await waitUntil(20_000, "the recovery reported", () =>
        background.some((e) => e.type === "background-recovered"),
      );
      await relaysOne(url, outbox, { redisUrl, label, name }, "after the outage");
      await running.stop();
      const reported = failures.length;
      expect(reported).toBeGreaterThanOrEqual(2);
      for (const failure of failures) {
        expect(failure).toMatchObject({ type: "background-failure", source: `outbox:${label}` });
        // The claim's error, naming the label's rows, with the server's own as its cause.
        expect(failure.error).toBeInstanceOf(RustStreamError);
        expect(failure.error).toMatchObject({
          code: "broker-failure",
          message: expect.stringContaining(`claiming rows of "${label}" failed`),
          cause: { code: "42P01" },
        });
      }
      // The failures, then their end once: the claims work again.
      expect(background).toEqual([
        ...failures,
        { type: "background-recovered", source: `outbox:${label}` },
      ]);
      // Each report is beside the logger's warning, not instead of it.
      expect(claimWarnings()).toBe(reported);
      // Recovered: the message written after the outage was published once, through the app.
      expect(published.map((e) => e.ok)).toEqual([true]);
      const { rows } = await sql.query(`SELECT count(*)::int AS n FROM ${outbox.table}`);
      expect(rows[0].n).toBe(0);
    } finally {
      await running.stop();
      await outbox.close();
      await sql.query(`DROP TABLE IF EXISTS ${outbox.table}, ${away}`);
      await sql.end();
      await redisCli(redisUrl, "DEL", name);
    }
  });
});

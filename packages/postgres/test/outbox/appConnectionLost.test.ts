import { type ConnectionChange, RustStreamError } from "@ruststream/core";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBroker } from "../../src/index.js";
import { waitUntil } from "../support.js";
import { redisCli, relaysOne, startRelayApp, warnings } from "./support.js";

// The relay in an app (outbox.relayIn) reports its outbox connection losing the server as the
// app's background-failure event (source outbox:<label>), and its return as the app's
// background-recovered event: that loss is retried inside the claim and told only as the outbox
// connection's state, which is none of the app's connections. On the real PostgreSQL: the outbox
// connection's backends (its pool's and its LISTEN's, found by their application_name) terminated
// under the running relay; once the connection is back, a message written then reaches the shared
// Redis once.

describe("the outbox relay's lost connection in an app", () => {
  it("emits a background-failure event when its outbox connection is cut, a background-recovered once it is back, and relays then", async () => {
    const url = requireEnv("POSTGRES_URL");
    const redisUrl = requireEnv("REDIS_URL");
    const applicationName = uniqueName("relaycut");
    const label = uniqueName("events");
    const name = uniqueName("orders");
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    const changes: ConnectionChange[] = [];
    const outbox = await new PostgresBroker({
      url,
      applicationName,
      ensureSchema: true,
    }).connectOutbox({ onState: (change) => changes.push(change) });
    const { logger, entries } = warnings("info");
    const { running, failures, background, published } = await startRelayApp(outbox, {
      redisUrl,
      label,
      name,
      logger,
    });
    try {
      expect(failures).toEqual([]);
      const ended = await sql.query(
        "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1",
        [`${applicationName} listen`],
      );
      expect(ended.rows.map((r) => r.ended)).toEqual([true]);
      // The pool's connections too: the relay's claims run on them.
      await sql.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        [applicationName],
      );
      await waitUntil(20_000, "the lost connection reported", () => failures.length >= 1);
      await waitUntil(20_000, "the outbox connection back", () =>
        entries.some((e) => e.message === "outbox relay: the outbox connection is back"),
      );
      await relaysOne(url, outbox, { redisUrl, label, name }, "after the cut");
      await running.stop();
      for (const failure of failures) {
        expect(failure).toMatchObject({ type: "background-failure", source: `outbox:${label}` });
        expect(failure.error).toBeInstanceOf(RustStreamError);
        expect(failure.error).toMatchObject({
          code: "broker-failure",
          message: expect.stringContaining("the outbox connection is reconnecting"),
        });
      }
      // Each loss is a change of the connection's state, which the listener given to
      // connectOutbox still hears: as many reports as losses it heard.
      const losses = changes.filter((c) => c.state === "reconnecting" || c.state === "lost");
      expect(failures.length).toBe(losses.length);
      // Each return after a loss is a recovery, told after it: the app's events follow the
      // connection's changes, and end recovered.
      const expected: string[] = [];
      let away = false;
      for (const { state } of changes) {
        if (state === "reconnecting" || state === "lost") {
          expected.push("background-failure");
          away = true;
        } else if (state === "connected" && away) {
          expected.push("background-recovered");
          away = false;
        }
      }
      expect(background.map((e) => e.type)).toEqual(expected);
      expect(background.at(-1)).toEqual({
        type: "background-recovered",
        source: `outbox:${label}`,
      });
      // Recovered: the message written after the cut was published once, through the app.
      expect(published.map((e) => e.ok)).toEqual([true]);
    } finally {
      await running.stop();
      await outbox.close();
      await sql.end();
      await redisCli(redisUrl, "DEL", name);
    }
  });
});

// A PostgreSQL server stopped (a fast shutdown) under a running app and started again on its data:
// readiness and the connection-state series follow it. The server is tooling/brokers' restartable
// cluster, on its own port, which the test starts, holds alone and stops; the cluster the other live
// tests share is never stopped. In the restarts group all the same, as the other restart tests.
import { PostgresBroker, PostgresQueue } from "@ruststream/postgres";
import { brokers, uniqueName } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { expectRecovery, subscribedApp } from "./outage.js";

const cluster = brokers.postgres.restartable;

test("postgres: its server stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
  cluster.exclusive(async () => {
    const url = await cluster.up();
    try {
      const queue = uniqueName("outage");
      await expectRecovery({
        ...subscribedApp(
          new PostgresBroker({ url, table: "outage_queue", ensureSchema: true }),
          new PostgresQueue(queue),
          queue,
        ),
        broker: "postgres",
        outage: (whileDown) => cluster.restart({ whileDown }),
        deadlineMs: 120_000,
      });
    } finally {
      await cluster.down();
    }
  }));

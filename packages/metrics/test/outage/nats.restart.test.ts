// The plain NATS server every project's live tests share, stopped (SIGTERM) under a running app and
// started again on its data: readiness and the connection-state series follow it. It runs in the
// restarts group (vitest.restart.config.ts), once no other test uses the server, and holds it alone.
import { NatsBroker } from "@ruststream/nats";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { expectRecovery, subscribedApp } from "./outage.js";

test("nats: its server stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
  brokers.nats.exclusive(async () => {
    // Core NATS: the client subscribes again on the new connection before it publishes there.
    const subject = uniqueName("outage");
    await expectRecovery({
      ...subscribedApp(new NatsBroker({ servers: requireEnv("NATS_URL") }), subject, subject),
      broker: "nats",
      outage: (whileDown) => brokers.nats.restart({ whileDown }),
      deadlineMs: 120_000,
    });
  }));

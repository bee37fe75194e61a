// The Pulsar standalone every project's live tests share, stopped under a running app and started
// again on its data: readiness and the connection-state series follow it. It runs in the restarts
// group (vitest.restart.config.ts), once no other test uses the standalone, and holds it alone.
import { PulsarBroker } from "@ruststream/pulsar";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { expectRecovery, subscribedApp } from "./outage.js";

test("pulsar: its standalone stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
  brokers.pulsar.exclusive(async () => {
    const topic = uniqueName("outage");
    await expectRecovery({
      ...subscribedApp(new PulsarBroker({ url: requireEnv("PULSAR_URL") }), topic, topic),
      broker: "pulsar",
      outage: (whileDown) => brokers.pulsar.restart({ whileDown }),
      deadlineMs: 120_000,
    });
  }));

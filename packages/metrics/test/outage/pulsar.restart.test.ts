// The Pulsar standalone every project's live tests share, stopped under a running app and started
// again on its data: readiness and the connection-state series follow it. It runs in the restarts
// group (vitest.restart.config.ts), once no other test uses the standalone, and holds it alone.
import { RustStream } from "@ruststream/core";
import { PulsarBroker } from "@ruststream/pulsar";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { throughOutage } from "./outage.js";

test("pulsar: its standalone stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
  brokers.pulsar.exclusive(async () => {
    const topic = uniqueName("outage");
    const handled: unknown[] = [];
    const app = new RustStream({ name: uniqueName("outage"), version: "1.0.0" }).broker(
      new PulsarBroker({ url: requireEnv("PULSAR_URL") }),
      (b) => {
        b.subscriber(topic).handle((message) => {
          handled.push(message);
        });
      },
    );
    const seen = await throughOutage({
      app,
      handled,
      broker: "pulsar",
      outage: (whileDown) => brokers.pulsar.restart({ whileDown }),
      publish: async (running, value) => {
        await running.publish(topic, value);
      },
      deadlineMs: 120_000,
    });
    expect(seen.before.ready).toEqual({ status: 200, body: { ready: true, state: "ready" } });
    expect(seen.during.ready.body.why).toEqual([
      expect.stringMatching(/^broker pulsar is reconnecting: /),
    ]);
    expect(seen.during.live.status).toBe(200);
    expect(seen.after.ready.status).toBe(200);
    expect(handled).toEqual([{ after: "recovery" }]);
  }));

// The Kafka node every project's live tests share, stopped under a running app and started again on
// its data, on each engine: readiness and the connection-state series follow it. It runs in the
// restarts group (vitest.restart.config.ts), once no other test uses the node, and holds it alone.
import { RustStream } from "@ruststream/core";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, test } from "vitest";
import { throughOutage } from "./outage.js";

describe.each(["librdkafka", "kafkajs"] as const)("kafka (%s)", (engine) => {
  test("its node stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
    brokers.kafka.exclusive(async () => {
      const topic = uniqueName(`outage-${engine}`);
      const handled: unknown[] = [];
      const app = new RustStream({ name: uniqueName("outage"), version: "1.0.0" }).broker(
        new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine }),
        (b) => {
          b.subscriber(new KafkaTopic(topic)).handle((message) => {
            handled.push(message);
          });
        },
      );
      const seen = await throughOutage({
        app,
        handled,
        broker: "kafka",
        outage: (whileDown) => brokers.kafka.restart({ whileDown }),
        publish: async (running, value) => {
          await running.publish(topic, value);
        },
        deadlineMs: 120_000,
      });
      expect(seen.before.ready).toEqual({ status: 200, body: { ready: true, state: "ready" } });
      expect(seen.during.ready.body.why).toEqual([
        expect.stringMatching(/^broker kafka is reconnecting: /),
      ]);
      expect(seen.during.live.status).toBe(200);
      expect(seen.after.ready.status).toBe(200);
      expect(handled).toEqual([{ after: "recovery" }]);
    }));
});

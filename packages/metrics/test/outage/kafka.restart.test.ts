// The Kafka node every project's live tests share, stopped under a running app and started again on
// its data, on each engine: readiness and the connection-state series follow it. It runs in the
// restarts group (vitest.restart.config.ts), once no other test uses the node, and holds it alone.
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, test } from "vitest";
import { expectRecovery, subscribedApp } from "./outage.js";

describe.each(["librdkafka", "kafkajs"] as const)("kafka (%s)", (engine) => {
  test("its node stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
    brokers.kafka.exclusive(async () => {
      const topic = uniqueName(`outage-${engine}`);
      await expectRecovery({
        ...subscribedApp(
          new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine }),
          // From the start of the (new) topic: the group has committed nothing before the outage,
          // and the member that joins again after the restart looks its position up anew. At the
          // default, the end, a lookup made after the publish skipped the message (a librdkafka
          // run waited 120 s for it): the connection reads connected, by the probe, before then.
          new KafkaTopic(topic, { start: "earliest" }),
          topic,
        ),
        broker: "kafka",
        outage: (whileDown) => brokers.kafka.restart({ whileDown }),
        deadlineMs: 120_000,
      });
    }));
});

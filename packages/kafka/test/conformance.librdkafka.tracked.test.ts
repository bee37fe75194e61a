import { requireEnv } from "@ruststream/tooling-testkit";
import { KafkaBroker } from "../src/index.js";
import { suites } from "./conformance.js";

// The librdkafka engine under `tracked`, against the real cluster.
suites(
  (transactionalId) =>
    new KafkaBroker({
      brokers: requireEnv("KAFKA_BROKERS"),
      engine: "librdkafka",
      transactionalId,
    }),
  "tracked",
);

import { KafkaBroker } from "../src/index.js";
import { suites } from "./conformance.js";
import { requireEnv } from "./env.js";

// The kafkajs engine under `auto`, against the real cluster.
suites(() => new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine: "kafkajs" }), "auto");

import { systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { requireEnv } from "@ruststream/tooling-testkit";
import { type ConnectedKafkaBroker, KafkaBroker, type KafkaBrokerOptions } from "../src/index.js";

/** Where a test runs: an engine against the cluster, or the in-process stand-in. */
export type Where = "librdkafka" | "kafkajs" | "in-process";

export const everywhere: readonly Where[] = ["librdkafka", "kafkajs", "in-process"];

/** A broker for `where`, with `options` beside the address. */
export function brokerFor(
  where: Where,
  options: Omit<KafkaBrokerOptions, "brokers" | "engine"> = {},
): KafkaBroker {
  return where === "in-process"
    ? new KafkaBroker({ brokers: "127.0.0.1:9092", ...options })
    : new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine: where, ...options });
}

/** Connects `broker` as `where` runs it. */
export function connect(where: Where, broker: KafkaBroker): Promise<ConnectedKafkaBroker> {
  return where === "in-process"
    ? broker.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock })
    : broker.connect();
}

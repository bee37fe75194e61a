import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Kafka (idempotently) and exports KAFKA_BROKERS and friends to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["kafka"]);
}
